"""`scan box:/data --ray ADDRESS`: the agent on the box scans on the box's own Ray cluster (here
the loopback cluster, the box an SSH server on this machine) and gives the local scan's records."""

from __future__ import annotations

import pytest

from eagle3_tui.dataset.findings import dataset_findings
from eagle3_tui.sources.base import SourceError
from eagle3_tui.sources.local import LocalSource

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def records(source, path) -> list[dict]:
    out = [item async for item in source.scan(str(path)) if "progress" not in item]
    return sorted(out, key=lambda r: r["path"])


def without_computed(rs):
    return [{k: v for k, v in r.items() if k != "computed"} for r in rs]


@pytest.mark.parametrize("server", ["openssh"], indirect=True)
async def test_box_scan_on_the_box_cluster_equals_the_local_scan(ray_cluster, server, open_box, clean):
    box = await open_box(str(clean))
    box.ray, box.ray_batch = ray_cluster.address, 4
    remote = await records(box, clean)
    local = await records(LocalSource(), clean)
    assert {r["computed"] for r in remote} == {"remote"}
    assert without_computed(remote) == without_computed(local)
    assert dataset_findings(remote) == dataset_findings(local)


@pytest.mark.parametrize("server", ["openssh"], indirect=True)
async def test_box_without_a_cluster_there_is_one_line(ray_cluster, server, open_box, clean):
    box = await open_box(str(clean))
    box.ray = "127.0.0.1:1"
    with pytest.raises(SourceError, match=r"--ray: --ray 127.0.0.1:1: no Ray cluster there"):
        await records(box, clean)
