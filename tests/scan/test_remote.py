"""A scan over SSH runs in the agent on the box and gives the same records as a local scan."""

from __future__ import annotations

import pytest

from eagle3_tui.dataset.stream import scan_dataset
from eagle3_tui.dataset.findings import dataset_findings
from eagle3_tui.dataset.cache import ScanCache
from eagle3_tui.sources.base import SourceError
from eagle3_tui.sources.local import LocalSource

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def records(source, path, **options) -> list[dict]:
    out = [item async for item in source.scan(str(path), **options) if "progress" not in item]
    return sorted(out, key=lambda r: r["path"])


def without_computed(rs):
    return [{k: v for k, v in r.items() if k != "computed"} for r in rs]


async def test_remote_scan_equals_local_scan(server, shared_box, planted):
    box = await shared_box()
    remote = await records(box, planted, workers=2)
    local = await records(LocalSource(), planted, workers=2)
    assert {r["computed"] for r in remote} == {"remote"}
    assert without_computed(remote) == without_computed(local)
    assert dataset_findings(remote) == dataset_findings(local)
    full = await records(box, planted, full=True, workers=1)
    assert without_computed(full) == without_computed(await records(LocalSource(), planted, full=True, workers=1))


async def test_remote_second_scan_sends_only_the_listing(server, shared_box, clean, tmp_path):
    box = await shared_box()
    cache = ScanCache(tmp_path / "cache.sqlite")
    first = [r async for r in scan_dataset(box, str(clean), cache=cache) if "progress" not in r]
    sent = box._agent.received
    second = [r async for r in scan_dataset(box, str(clean), cache=cache) if "progress" not in r]
    assert all(r.get("cached") for r in second) and not any(r.get("cached") for r in first)
    assert len(second) == len(first) == 36
    # stubs of ~100 bytes per file, not records of ~1 KB
    assert box._agent.received - sent < 200 * len(second)
    cache.close()


async def test_missing_remote_folder_is_one_clear_error(server, shared_box, clean):
    box = await shared_box()
    with pytest.raises(SourceError, match="no such file or folder"):
        await records(box, f"{clean}/nope")


async def test_box_without_torch_says_scanning_needs_torch_there(server, open_box, clean, python_without_torch):
    box = await open_box(str(clean), remote_python=python_without_torch)
    with pytest.raises(SourceError, match="needs Python 3.9\\+ with torch there .*no torch"):
        await records(box, clean)


async def test_remote_scan_reads_within_the_budget_on_the_box_as_locally(server, shared_box, clean):
    # the demo files are ~100 KiB: a 64K budget makes the box read them with the counting reader
    box = await shared_box()
    remote = await records(box, clean, budget=64 << 10, workers=1)
    local = await records(LocalSource(), clean, budget=64 << 10, workers=1)
    assert {r["computed"] for r in remote} == {"remote"}
    assert without_computed(remote) == without_computed(local)
    assert all(r["bytes_read"] < r["size"] and r["rows_read"] < r["tokens"] for r in remote)
    whole = await records(box, clean, workers=1)  # within the default budget: every row
    assert all(r["rows_read"] == r["tokens"] for r in whole)
