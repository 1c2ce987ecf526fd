"""Listing folders over SSH: natural order, streaming pages, hostile names, errors."""

import os
import sys
from dataclasses import replace

import pytest

from eagle3_tui.sources.base import NaturalListing, SourceError
from eagle3_tui.sources.local import LocalSource
from tests.helpers.ssh import HOSTILE_NAMES, pwned_markers

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.mark.parametrize("lister", ["agent", "sftp"])
async def test_twenty_thousand_files_arrive_in_pages_and_natural_order(server, shared_box, big_folder, lister):
    box = await shared_box(sys.executable if lister == "agent" else "/nonexistent/python3")
    listing = NaturalListing()
    pages = 0
    async for page in box.list_pages(str(big_folder), page_size=1000):
        pages += 1
        listing.add(page)
    names = [e.name for e in listing.entries]
    assert names[:3] == ["rows_0-2000", "rows_2000-4000", "rows_10000-12000"]
    assert names[3:] == [f"data_{i}.ckpt" for i in range(20_000)]
    assert pages >= 20  # streamed, not one blob at the end
    assert all(e.kind == "file" and e.size == 0 for e in listing.entries[3:])


async def test_listing_matches_the_local_one(server, shared_box, dataset):
    box = await shared_box()
    remote = await box.list_all(str(dataset))
    local = await LocalSource().list_all(str(dataset))
    # whole seconds: while the agent starts, SFTP lists, and SFTP v3 carries mtimes in seconds
    assert [replace(e, mtime=int(e.mtime or 0)) for e in remote] == [replace(e, mtime=int(e.mtime or 0)) for e in local]
    kinds = {e.name: e.kind for e in remote}
    assert kinds["dead_link.pt"] == "link"
    assert kinds["rows_0-2000"] == "dir"
    assert kinds["notes.txt"] == "file"


async def test_without_remote_python_the_listing_comes_over_sftp_and_is_the_same(server, open_box, dataset):
    box = await open_box(str(dataset), remote_python="/nonexistent/python3")
    remote = await box.list_all(str(dataset))
    local = await LocalSource().list_all(str(dataset))
    # SFTP v3 carries whole seconds only
    assert [(e.name, e.kind, e.size, int(e.mtime or 0)) for e in remote] == [
        (e.name, e.kind, e.size, int(e.mtime or 0)) for e in local
    ]
    said = [s for s in box.statuses if "not found" in s]
    assert len(said) == 1 and "/nonexistent/python3" in said[0]
    assert box.computed == "local"


@pytest.mark.parametrize("python", ["agent", "sftp"])
async def test_hostile_names_are_listed_exactly_and_nothing_runs(server, shared_box, hostile, python):
    box = await shared_box(sys.executable if python == "agent" else "/nonexistent/python3")
    names = sorted(e.name for e in await box.list_all(str(hostile)))
    assert names == sorted(HOSTILE_NAMES)
    assert sorted(os.listdir(os.fsencode(hostile))) == sorted(os.fsencode(n) for n in HOSTILE_NAMES)
    for name in HOSTILE_NAMES:
        entry = await box.stat(f"{hostile}/{name}")
        assert entry.name == name and entry.kind == "file"
    assert pwned_markers(hostile) == []


async def test_a_missing_folder_is_one_clear_line(server, shared_box, dataset):
    box = await shared_box()
    with pytest.raises(SourceError) as err:
        await box.list_all(f"{dataset}/no_such_dir")
    assert str(err.value) == f"box:{dataset}/no_such_dir: no such file or folder"
    with pytest.raises(SourceError) as err:
        await box.list_all(f"{dataset}/notes.txt")
    assert str(err.value) == f"box:{dataset}/notes.txt: not a folder"
    with pytest.raises(SourceError) as err:
        await box.stat(f"{dataset}/nothing.pt")
    assert str(err.value) == f"box:{dataset}/nothing.pt: no such file or folder"
    # the source is still usable after each of those
    assert len(await box.list_all(str(dataset))) == 6
