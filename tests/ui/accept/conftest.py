"""The drafter trained in tests/accept (reused), samples of its world, and an app given --drafter."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import torch

from eagle3_tui.sources.local import LocalSource
from eagle3_tui.ui.analysis import Analysis
from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.connect import Opened
from tests.accept.conftest import Trained, _save_sample, trained  # noqa: F401 - the session fixture
from tests.accept.drafter_maker import AUX
from tests.torch_threads import _one_torch_thread  # noqa: F401 - autouse fixture

PERMUTED = [AUX[2], AUX[0], AUX[1]]


class WatchedSource(LocalSource):
    """The real local source, recording which drafter runs started and which were cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.accepted: list[str] = []
        self.cancelled: list[str] = []

    async def accept(self, path, drafter, **kw):
        self.accepted.append(path)
        try:
            return await super().accept(path, drafter, **kw)
        except asyncio.CancelledError:
            self.cancelled.append(path)
            raise


def make_app(target, drafter: str | None, source: LocalSource | None = None) -> Eagle3App:
    source = source or WatchedSource()

    async def opener(text, **_kwargs):
        return Opened(source, str(Path(text).resolve()), "local")

    app = Eagle3App(str(target), opener=opener, analysis=Analysis.from_options(drafter=drafter))
    app.test_source = source  # type: ignore[attr-defined]
    return app


@pytest.fixture(scope="session")
def data(trained: Trained, tmp_path_factory) -> Path:  # noqa: F811
    """a_train.ckpt (training sample), b_permuted.pt (the same states, slots in another order,
    nothing else different), c_long.ckpt (the sample repeated: thousands of rows, to cancel)."""
    root = tmp_path_factory.mktemp("ui_accept")
    seq = trained.held_out[0]
    _save_sample(root / "a_train.ckpt", seq)
    _save_sample(root / "b_permuted.pt", seq, boundaries=PERMUTED)
    reps = 60
    rec = {"input_ids": seq.ids.repeat(reps), "loss_mask": seq.loss_mask.repeat(reps),
           "aux_hidden_state": torch.cat([seq.states[b] for b in AUX], -1).repeat(reps, 1)[None].clone()}
    torch.save(rec, root / "c_long.ckpt")
    return root
