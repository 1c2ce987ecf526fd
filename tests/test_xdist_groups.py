"""The suite's xdist groups take effect: the Ray tests share one worker and its one cluster, and big
module fixtures are built once. pytest 9.2 with pytest-xdist 3.8 ignored every group silently (the
group went into a node id field pytest no longer read), which doubled that work without a failure."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.xdist_group("xdist-groups-check")


def test_a_grouped_test_runs_under_its_group(request):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run by pytest-xdist's --dist loadgroup (the README's command is)")
    assert request.node.nodeid.endswith("@xdist-groups-check"), (
        f"{request.node.nodeid}: xdist_group marks are ignored by this pytest/pytest-xdist pair")
