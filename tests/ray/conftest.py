"""A local Ray cluster on loopback for the `scan --ray` tests (tests/helpers/ray_cluster.py): a
head and one worker node, one CPU each, for this folder's tests, stopped after them even on failure."""

from __future__ import annotations

import os
import shutil
import sys
import threading

import pytest

from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture
from tests.helpers.ray_cluster import start_cluster


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
def _ray_cluster_stops():
    """The clusters still stopping in the background: joined before the worker ends."""
    stops: list[threading.Thread] = []
    yield stops
    for thread in stops:
        thread.join()


@pytest.fixture(scope="package")
def ray_cluster(_ray_cluster_stops):
    """For this folder only (its tests run in one worker, back to back): its nodes would
    otherwise idle on the shared cores for the rest of the suite."""
    ray_or_skip()
    cluster = start_cluster(workers=1)
    yield cluster
    # the TUI's scan connected this very process: it leaves first, or its driver would end the
    # process a minute after the cluster is gone
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()
    _ray_cluster_stops.append(cluster.stop_in_background())


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (--dist loadgroup), every Ray test runs in one worker: the cluster is a
    session fixture of two `ray start` nodes, and two of them at once would only fight for 2 cores."""
    for item in items:
        if "tests/ray/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.xdist_group("ray"))
