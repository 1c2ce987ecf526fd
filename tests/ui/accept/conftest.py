"""Samples of the world of the shared drafter (`trained`, tests/helpers/accept.py) for the app
given --drafter (tests/helpers/tui.py: make_drafter_app)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.helpers.accept import Trained, _save_sample
from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture
from tests.helpers.drafter import AUX

PERMUTED = [AUX[2], AUX[0], AUX[1]]


@pytest.fixture(scope="session")
def data(trained: Trained, tmp_path_factory) -> Path:
    """a_train.ckpt (training sample), b_permuted.pt (the same states, slots in another order,
    nothing else different), c_long.ckpt (the sample repeated: thousands of rows, to cancel),
    d_capture.pt (the same states as a capture holds them: no loss mask, no final state)."""
    root = tmp_path_factory.mktemp("ui_accept")
    seq = trained.held_out[0]
    _save_sample(root / "a_train.ckpt", seq)
    _save_sample(root / "b_permuted.pt", seq, boundaries=PERMUTED)
    reps = 60
    rec = {"input_ids": seq.ids.repeat(reps), "loss_mask": seq.loss_mask.repeat(reps),
           "aux_hidden_state": torch.cat([seq.states[b] for b in AUX], -1).repeat(reps, 1)[None].clone()}
    torch.save(rec, root / "c_long.ckpt")
    _save_sample(root / "d_capture.pt", seq, mask=False, final=False)
    return root
