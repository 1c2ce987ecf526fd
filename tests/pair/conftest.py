from __future__ import annotations

import pytest

from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture
from tests.helpers.demo_world import demo_once


@pytest.fixture(scope="session")
def demo(tmp_path_factory, untouched):
    return demo_once(tmp_path_factory, untouched, drafter=True)[0]  # accept --ids-from runs its drafter
