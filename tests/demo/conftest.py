from __future__ import annotations

import pytest

from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture
from tests.helpers.demo_world import demo_once


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory, untouched):
    """The demo dataset (seed 0) the other areas read too (tests/helpers/demo_world.py)."""
    return demo_once(tmp_path_factory, untouched)

