"""`scan --model` with its verification (issue 23) on N demo files (env EAGLE3_BENCH_VERIFY_FILES,
default 2,000), SpecForge shards written by the demo transformer, with the demo model's Hugging
Face folder as the target.

Baseline: the quick scan alone (`eagle3-tui scan DIR --no-cache`) plus identifying the stated
sample alone (identify_file on the same number of files, one process, the model loaded once).
Ours: `eagle3-tui scan DIR --model MODEL --no-cache`, which plans and identifies the sample.
Target: at most 1.5x. Each side is a fresh process (both pay the torch import).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
N = int(os.environ.get("EAGLE3_BENCH_VERIFY_FILES", "2000"))

_IDENTIFY = """
import sys, json, time
from eagle3_tui.engines.model.identify import identify_file
paths = json.loads(sys.stdin.read())
for p in paths:
    r = identify_file(p, sys.argv[1], tokens=512, device="cpu")
    assert "error" not in r, r
"""


def _files() -> tuple[Path, Path]:
    d = Path(os.environ.get("EAGLE3_BENCH_DIR", Path(tempfile.gettempdir()) / "eagle3-bench")) / f"verify-{N}"
    data, model = d / "data", d / "model"
    if not (d / "done").exists():
        sys.path.insert(0, str(ROOT))
        from eagle3_tui.demo.hf_folder import write_model_folder
        from eagle3_tui.demo.model import build_model
        from tests.helpers.scan_build import build

        m = build_model(seed=0)
        write_model_folder(m, str(model))
        build(data, shards=max(1, N // 500), per_shard=min(N, 500), seed=0, model=m)
        (d / "done").write_text("ok")
    return data, model


def _run(argv: list[str], stdin: str | None = None) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    out = subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=ROOT, env=env)
    dt = time.perf_counter() - t0
    if out.returncode not in (0, 1):
        raise RuntimeError(out.stderr[-2000:])
    return dt, out.stdout


def scan_model_verify() -> dict:
    data, model = _files()
    cli = [sys.executable, "-m", "eagle3_tui"]
    ours, out = _run([*cli, "scan", str(data), "--model", str(model), "--no-cache", "--json"])
    last = json.loads(out.splitlines()[-1])
    checked = next(f for f in last["findings"] if f["code"] == "layers_checked")
    n = checked["checked"] + len(last.get("layers") or [])
    quick, _ = _run([*cli, "scan", str(data), "--no-cache", "--json"])
    paths = sorted(str(p) for p in data.rglob("*.ckpt"))[:n]
    ident, _ = _run([sys.executable, "-c", _IDENTIFY, str(model)], stdin=json.dumps(paths))
    return {
        "figure": ours,
        "baseline": quick + ident,
        "unit": "s",
        "target": "<= 1.5x",
        "details": f"{N} files; identified {n} ({checked['suspects']} suspects + {checked['drawn']} drawn of "
                   f"{checked['pool']} + {len(last.get('layers') or [])} representatives); quick scan {quick:.1f} s, "
                   f"identifying {n} files alone {ident:.1f} s",
    }


BENCHMARKS = {"scan_model_verify": scan_model_verify}
