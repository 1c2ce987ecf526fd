from __future__ import annotations

import pytest

from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    from eagle3_tui.demo.dataset import write_demo

    d = tmp_path_factory.mktemp("demo") / "eagle3-demo"
    write_demo(str(d), seed=0, drafter=True)  # accept --ids-from runs it
    return d
