"""Test data for compare: the world of tests/helpers/compare_world.py and the demo dataset."""

from __future__ import annotations

import pytest

from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture
from tests.helpers.compare_world import World


@pytest.fixture(scope="session")
def world():
    return World(0)


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    from eagle3_tui.demo.dataset import write_demo

    d = tmp_path_factory.mktemp("demo") / "eagle3-demo"
    return d, write_demo(str(d), seed=0)
