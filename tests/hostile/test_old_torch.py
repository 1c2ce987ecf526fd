"""A torch below 2.10 never unpickles: eagle3-tui run by a Python whose torch is 2.5.1 (an
environment installed without dependency resolution; tests/helpers/old_torch.py) refuses every
pickle unread, says why in one line, still reads safetensors, and loads only with --trust-data,
saying then that the loads were unsafe. The observable that nothing was unpickled: that Python's
torch.load writes every call to a log, and the log stays empty."""

from __future__ import annotations

import ast
import gzip
import json
import os
from pathlib import Path

import pytest
import torch

from tests.helpers import warm_cli
from tests.helpers.evil_files import RunsShell
from tests.helpers.old_torch import OLD
from tests.helpers.sample_files import write_safetensors

# its old-torch Python is made once: the module's tests share one xdist worker
pytestmark = pytest.mark.xdist_group("old-torch")

ROOT = Path(__file__).resolve().parents[2]
LINE = (f"this Python's torch {OLD} cannot load .pt files safely (CVE-2025-32434, CVE-2026-24747): "
        "install torch>=2.10 in it, or run eagle3-tui with a Python that has it")


def _tensors(seed: int, t: int = 16, h: int = 8) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {"input_ids": torch.randint(1, 1000, (t,), generator=g), "loss_mask": torch.ones(t, dtype=torch.int64),
            "aux_hidden_state": torch.randn(1, t, 3 * h, generator=g), "hidden_state": torch.randn(1, t, h, generator=g)}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """34 pickles of every kind a producer writes (zip .ckpt, .ckpt.gz, legacy .pt), a sample as
    safetensors, a vocab mapping, and a file that runs a shell command if ever unpickled."""
    root = tmp_path_factory.mktemp("old-torch-data")
    for i in range(32):
        torch.save(_tensors(i), root / f"data_{i}.ckpt")
    (root / "data_32.ckpt.gz").write_bytes(gzip.compress((root / "data_0.ckpt").read_bytes()))
    torch.save(_tensors(33), root / "data_33.pt", _use_new_zipfile_serialization=False)
    write_safetensors(root / "data_40.safetensors", _tensors(40))
    torch.save({"d2t": torch.zeros(8, dtype=torch.int64), "t2d": torch.ones(32, dtype=torch.bool)},
               root / "vocab_mapping.pt")
    evil = root.parent / "evil"
    evil.mkdir()
    torch.save({**_tensors(1), "x": RunsShell(evil / "MARKER")}, evil / "data_0.ckpt")
    return root


def run(old_torch, *args: str, **env_vars: str) -> tuple[int, str, str]:
    """`eagle3-tui ARGS` run by the old-torch Python, as its user would run it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_vars}
    proc = warm_cli.run([old_torch.python, "-m", "eagle3_tui", *args], text=True, env=env, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def old(old_torch):
    old_torch.clear()
    yield old_torch
    old_torch.clear()


def test_single_file_commands_refuse_every_pickle_unread_and_exit_2(old, data):
    for name in ("data_0.ckpt", "data_32.ckpt.gz", "data_33.pt"):
        rc, out, err = run(old, "summary", str(data / name))
        assert rc == 2 and LINE in err, (name, rc, err)
    rc, out, err = run(old, "compare", str(data / "data_0.ckpt"), str(data / "data_1.ckpt"), "--json")
    assert rc == 2 and LINE in json.loads(out)["error"], err
    rc, out, err = run(old, "scan", str(data), "--vocab-mapping", str(data / "vocab_mapping.pt"))
    assert rc == 2 and f"--vocab-mapping: {data / 'vocab_mapping.pt'}: {LINE}" in err, err
    assert old.load_calls() == []


def test_a_crafted_pickle_meets_the_gate_not_the_unpickler(old, data):
    evil = data.parent / "evil" / "data_0.ckpt"
    rc, out, err = run(old, "summary", str(evil), "--json")
    result = json.loads(out)
    # torch.load's own weights_only refusal ("the file asks to run Python code") would mean it ran
    assert rc == 2 and result["error"].startswith(LINE) and "Python code" not in result["error"]
    assert old.load_calls() == [] and not (evil.parent / "MARKER").exists()


def test_summary_json_says_which_python_and_torch_and_safetensors_still_read(old, data):
    rc, out, err = run(old, "summary", str(data / "data_40.safetensors"), "--json")
    assert rc == 0, err
    result = json.loads(out)
    assert result["tokens"] == 16 and "error" not in result
    assert result["runtime"] == {"computed": "local", "python": result["runtime"]["python"],
                                 "executable": old.python, "torch": OLD, "pickles": "refused (torch below 2.10)"}
    assert "unsafe_loads" not in result


def test_scan_with_its_worker_pool_reports_each_pickle_says_why_once_and_caches_none(old, data, tmp_path):
    cache = {"EAGLE3_TUI_CACHE_DIR": str(tmp_path / "cache")}  # both runs share one record cache
    for attempt in ("first", "second"):
        rc, out, err = run(old, "scan", str(data), "--json", "--workers", "2", **cache)
        *lines, last = out.splitlines()
        records = {r["path"]: r for r in map(json.loads, lines)}
        summary = json.loads(last)["summary"]
        pickles = [p for p in records if p.endswith((".ckpt", ".gz", ".pt")) and p != "vocab_mapping.pt"]
        assert len(pickles) == 34 and all(records[p]["error"] == LINE + _TAIL for p in pickles), attempt
        assert not any(records[p].get("cached") for p in pickles), f"{attempt} scan read a refusal from the cache"
        assert summary["refused"] == f"35 pickle files not read: {LINE}{_TAIL}"
        assert summary["workers"] == 2 and summary["runtime"]["torch"] == OLD
        assert "error" not in records["data_40.safetensors"]
    assert records["data_40.safetensors"].get("cached")  # the cache works: it only leaves refusals out
    rc, out, err = run(old, "scan", str(data), **cache)
    assert out.count(f"35 pickle files not read: {LINE}") == 1
    assert old.load_calls() == []


_TAIL = " (--trust-data loads them anyway, for files you made yourself)"


def test_trust_data_loads_and_every_json_result_says_it_was_unsafe(old, data):
    rc, out, err = run(old, "summary", str(data / "data_0.ckpt"), "--json", "--trust-data")
    assert rc == 0, err
    result = json.loads(out)
    assert result["tokens"] == 16 and result["runtime"]["pickles"] == "loaded unsafely (--trust-data)"
    assert result["unsafe_loads"].startswith(f"--trust-data: .pt files were loaded with torch {OLD}")
    rc, out, err = run(old, "compare", str(data / "data_0.ckpt"), str(data / "data_1.ckpt"), "--json", "--trust-data")
    assert rc in (0, 1) and "unsafe_loads" in json.loads(out), err
    assert len(old.load_calls()) >= 3
    old.clear()
    rc, out, err = run(old, "summary", str(data / "data_0.ckpt"))  # never remembered
    assert rc == 2 and old.load_calls() == []


def test_every_torch_load_in_the_package_is_behind_the_gate():
    """A new torch.load must call torch_gate.check() first, in the same function, or load through one that does."""
    found = []
    for path in (ROOT / "eagle3_tui").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
            loads = [c for c in calls if c.func.attr == "load" and getattr(c.func.value, "id", None) == "torch"]
            gate = [c.lineno for c in calls if c.func.attr == "check" and getattr(c.func.value, "id", None) == "torch_gate"]
            for call in loads:
                found.append((path.name, fn.name))
                assert gate and min(gate) < call.lineno, f"{path}:{call.lineno} torch.load without torch_gate.check()"
    # one door: the quick scan's structure-only "meta" load is gone (it read offsets nobody checked)
    assert sorted(set(found)) == [("load.py", "_torch_load")]
