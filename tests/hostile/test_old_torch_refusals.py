"""Issue 44, item 7: where files refused by a torch below 2.10 decide the answer, the answer says
so and how many (serve-check's unknown boundaries, pair's empty ranking), instead of a message
that reads as if the data were at fault."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from tests.helpers import warm_cli
from tests.helpers.folder_world import Folders
from tests.helpers.old_torch import OLD
from tests.helpers.sample_files import write_safetensors

pytestmark = pytest.mark.xdist_group("old-torch")

ROOT = Path(__file__).resolve().parents[2]
REFUSAL = f"this Python's torch {OLD} cannot load .pt files safely"


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> Folders:
    return Folders(tmp_path_factory.mktemp("refusals"))


def run(old_torch, *args) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = warm_cli.run([old_torch.python, "-m", "eagle3_tui", *map(str, args)], text=True, env=env, timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_serve_check_says_every_file_was_refused(old_torch, folders):
    rc, out, err = run(old_torch, "serve-check", folders.drafter, folders.data, "--model", folders.model)
    assert rc == 2 and "all 2 files were refused: " in err and REFUSAL in err, err
    assert "no file of the majority could be identified" not in err
    assert old_torch.load_calls() == []


def test_pair_says_every_sample_was_refused(old_torch, folders, tmp_path):
    capture = tmp_path / "capture.safetensors"  # no pickle: the capture itself is read
    write_safetensors(capture, {k: v for k, v in torch.load(folders.sample, weights_only=True).items()
                                if isinstance(v, torch.Tensor)})
    rc, out, err = run(old_torch, "pair", capture, folders.data, "--no-cache")
    assert rc == 1, (out, err)
    assert "  all 2 files were refused: " in out and REFUSAL in out, out
    assert "no training sample could be compared" in out and "holds its prompt" not in out
    assert old_torch.load_calls() == []
