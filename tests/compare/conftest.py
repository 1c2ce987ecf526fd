"""Test data for compare: the world of tests/helpers/compare_world.py and the demo dataset."""

from __future__ import annotations

import pytest

from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture
from tests.helpers.compare_world import World
from tests.helpers.demo_world import demo_once


@pytest.fixture(scope="session")
def world():
    return World(0)


@pytest.fixture(scope="session")
def demo(tmp_path_factory, untouched):
    return demo_once(tmp_path_factory, untouched)
