"""A local Ray cluster on loopback for the `scan --ray` tests (tests/helpers/ray_cluster.py): a
head and one worker node, one CPU each, for the session, stopped at its end even on failure."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture
from tests.helpers.ray_cluster import local_cluster


def ray_or_skip():
    """Skip without Ray, unless EAGLE3_TUI_REQUIRE_RAY is set (.ci/run): then fail."""
    problem = None
    try:
        import ray  # noqa: F401
    except ImportError:
        problem = 'Ray is not installed (pip install "eagle3-tui[ray]")'
    if problem is None and shutil.which("ray") is None:
        problem = "the `ray` command is not on PATH"
    if problem is not None:
        if os.environ.get("EAGLE3_TUI_REQUIRE_RAY"):
            pytest.fail(problem)
        pytest.skip(problem)


@pytest.fixture(scope="session")
def ray_cluster():
    """For the session, not only this folder's tests: the TUI's scan connects the worker's own
    process to it. Stopped mid-session, a worker that had held that connection died minutes later
    (a segfault in a thread; the driver is the likely cause), and pytest-xdist's scheduling with it."""
    ray_or_skip()
    with local_cluster(workers=1) as cluster:
        yield cluster
        ray = sys.modules.get("ray")
        if ray is not None and ray.is_initialized():
            ray.shutdown()  # this process's driver leaves before the cluster goes


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (--dist loadgroup), every Ray test runs in one worker: the cluster is a
    session fixture of two `ray start` nodes, and two of them at once would only fight for 2 cores."""
    for item in items:
        if "tests/ray/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.xdist_group("ray"))
