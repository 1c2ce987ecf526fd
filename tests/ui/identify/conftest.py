"""The TUI with a target model: the tiny Llama (tests/helpers/tiny_llama.py) and captures at known
boundaries; the app given --model is tests/helpers/tui.py's make_model_app."""

from __future__ import annotations

import pytest

from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture
from tests.helpers.identify_world import DEFAULT, World

DEEPER = tuple(b + 1 for b in DEFAULT)  # ids read as the output of the layer instead of its input


@pytest.fixture(scope="session")
def world(tmp_path_factory) -> World:
    w = World(tmp_path_factory.mktemp("ui-identify"))
    (w.root / "data").mkdir()
    w.specforge("data/a_train.ckpt")
    w.specforge("data/b_infer.ckpt", DEEPER)
    return w
