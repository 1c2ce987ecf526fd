"""The TUI with a target model: the tiny Llama of tests/identify and captures at known boundaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.identify.conftest import DEFAULT, World
from tests.torch_threads import _one_torch_thread  # noqa: F401 - autouse fixture

DEEPER = tuple(b + 1 for b in DEFAULT)  # ids read as the output of the layer instead of its input


@pytest.fixture(scope="session")
def world(tmp_path_factory) -> World:
    w = World(tmp_path_factory.mktemp("ui-identify"))
    (w.root / "data").mkdir()
    w.specforge("data/a_train.ckpt")
    w.specforge("data/b_infer.ckpt", DEEPER)
    return w


def make_app(target: Path, model: str | None):
    from eagle3_tui.sources.local import LocalSource
    from eagle3_tui.ui.analysis import Analysis
    from eagle3_tui.ui.app import Eagle3App
    from eagle3_tui.ui.connect import Opened

    source = LocalSource()

    async def opener(text, **_kwargs):
        return Opened(source, str(Path(text).resolve()), "local")

    return Eagle3App(str(target), opener=opener, analysis=Analysis(model=model))
