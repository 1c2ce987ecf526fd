"""The first folder listed on a fresh connection comes over SFTP before the agent is up (no login
shell, no Python start to wait for), with pipelined READDIRs read by our own parser: it must say
exactly what the agent and the local file system say."""

import os
import sys

import pytest
import pytest_asyncio

from eagle3_tui.sources.base import NaturalListing, SourceError
from eagle3_tui.sources.local import LocalSource
from eagle3_tui.sources.opener import open_source
from eagle3_tui.target import parse_target
from tests.helpers.ssh import HOSTILE_NAMES, pwned_markers

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest_asyncio.fixture(loop_scope="session")
async def fresh_box(client_files):
    """fresh_box() -> a connected source whose agent has not started yet."""
    opened = []

    async def make():
        config, known = client_files
        statuses: list[str] = []
        source = open_source(parse_target("box:/"), ssh_config=config, known_hosts=known,
                             remote_python=sys.executable, on_status=statuses.append)
        source.statuses = statuses
        opened.append(source)
        await source.connect()
        return source

    yield make
    for source in opened:
        await source.close()


def _seconds(entries):
    # SFTP v3 carries whole seconds only
    return [(e.name, e.kind, e.size, int(e.mtime or 0)) for e in entries]


async def test_the_first_listing_does_not_wait_for_the_agent_and_says_what_it_will_say(server, fresh_box, dataset):
    box = await fresh_box()
    listing = NaturalListing()
    said_at_first_page = None
    async for page in box.list_pages(str(dataset)):
        if said_at_first_page is None:
            said_at_first_page = list(box.statuses)
        listing.add(page)
    assert not any("agent" in s for s in said_at_first_page), said_at_first_page
    local = await LocalSource().list_all(str(dataset))
    assert _seconds(listing.entries) == _seconds(local)
    assert {e.name: e.kind for e in listing.entries}["dead_link.pt"] == "link"
    # the agent starts after that listing and lists from then on, to the sub-second
    await box.agent_ready()
    assert box.computed == "remote" and any(s.startswith("connected (agent") for s in box.statuses)
    assert await box.list_all(str(dataset)) == local


async def test_twenty_thousand_names_before_the_agent_all_arrive_once_in_natural_order(server, fresh_box, big_folder):
    box = await fresh_box()
    names = [e.name for e in await box.list_all(str(big_folder))]
    assert names[:3] == ["rows_0-2000", "rows_2000-4000", "rows_10000-12000"]
    assert names[3:] == [f"data_{i}.ckpt" for i in range(20_000)]


async def test_hostile_names_before_the_agent_are_exact_and_run_nothing(server, fresh_box, hostile):
    box = await fresh_box()
    names = sorted(e.name for e in await box.list_all(str(hostile)))
    assert names == sorted(HOSTILE_NAMES)
    assert sorted(os.fsencode(n) for n in names) == sorted(os.listdir(os.fsencode(hostile)))
    assert pwned_markers(hostile) == []


async def test_a_first_listing_left_after_one_page_leaves_the_connection_usable(server, fresh_box, big_folder, dataset):
    box = await fresh_box()
    pages = box.list_pages(str(big_folder), page_size=100)
    first = await pages.__anext__()
    assert len(first) == 100
    await pages.aclose()  # READDIRs still in flight must not confuse what follows
    local = await LocalSource().list_all(str(dataset))
    assert _seconds(await box.list_all(str(dataset))) == _seconds(local)
    assert (await box.stat(f"{dataset}/notes.txt")).kind == "file"


async def test_bad_folders_before_the_agent_give_the_agents_one_line(server, fresh_box, dataset):
    box = await fresh_box()
    with pytest.raises(SourceError) as err:
        await box.list_all(f"{dataset}/no_such_dir")
    assert str(err.value) == f"box:{dataset}/no_such_dir: no such file or folder"
    again = await fresh_box()
    with pytest.raises(SourceError) as err:
        await again.list_all(f"{dataset}/notes.txt")
    assert str(err.value) == f"box:{dataset}/notes.txt: not a folder"
