"""torch does not require numpy, and a box's Python may not have it: a scan there says so in one
line, file by file, instead of torch's "Numpy is not available" (or a silent wrong number)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import torch

from eagle3_tui.engines.scan.measure import NO_NUMPY

# numpy made unimportable before torch is imported, as on a Python where it is not installed
WITHOUT_NUMPY = """
import importlib.abc, sys

class NoNumpy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ModuleNotFoundError("No module named 'numpy'")

sys.meta_path.insert(0, NoNumpy())
from eagle3_tui.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _sample(path: Path, t: int = 40, h: int = 16) -> None:
    g = torch.Generator().manual_seed(0)
    torch.save({"input_ids": torch.randint(1, 100, (t,), generator=g), "loss_mask": torch.ones(t, dtype=torch.int64),
                "aux_hidden_state": torch.randn(1, t, 3 * h, generator=g), "hidden_state": torch.randn(1, t, h, generator=g)},
               path)


def test_a_scan_without_numpy_names_what_is_missing_and_how_to_get_it(tmp_path):
    shard = tmp_path / "rows_0-2"
    shard.mkdir()
    for i in range(2):
        _sample(shard / f"data_{i}.ckpt")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", WITHOUT_NUMPY, "scan", str(tmp_path), "--no-cache"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert "2 files cannot be read as samples (2 x numpy is not installed next to torch" in out.stdout, out.stdout
    assert "pip install numpy" in out.stdout
    assert "Numpy is not available" not in out.stdout + out.stderr and "Traceback" not in out.stderr
    # the same files, numpy importable: read
    ok = subprocess.run([sys.executable, "-m", "eagle3_tui", "scan", str(tmp_path), "--no-cache"], env=env,
                        capture_output=True, text=True, timeout=120)
    assert NO_NUMPY not in ok.stdout and "2 samples, 0 unreadable" in ok.stdout, ok.stdout
