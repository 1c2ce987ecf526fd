from __future__ import annotations

import pytest

from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory):
    """One demo dataset (seed 0) shared by the demo tests: writing it takes about 1.5 s."""
    from eagle3_tui.demo.dataset import write_demo

    d = tmp_path_factory.mktemp("demo") / "eagle3-demo"
    manifest = write_demo(str(d), seed=0)
    return d, manifest

