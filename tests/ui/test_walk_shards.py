"""n/p past the end of a shard folder walk on into the next one in natural order, as someone
stepping through a SpecForge dataset (rows_0-2000, rows_2000-4000, ...) expects, locally and
over SSH, listing only the parent and the shard folders up to the one with a sample."""

from __future__ import annotations

import pytest_asyncio

from eagle3_tui.sources.local import LocalSource
from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.start.connect import open_target
from tests.helpers.ssh_servers import InProcessServer, Keys, write_client_files
from tests.helpers.tui import make_app, screen_text, wait_until
from tests.helpers.warm_cli import warm_box_python


class ListingRecorder(LocalSource):
    """The real local source, recording every folder it lists (pages or whole)."""

    def __init__(self) -> None:
        super().__init__()
        self.listed: list[str] = []

    async def list_pages(self, path, page_size=1000):
        self.listed.append(path)
        async for page in super().list_pages(path, page_size):
            yield page


def record_listings(source) -> list[str]:
    """Record the folders a (remote) source lists, wrapping its own method on the instance."""
    listed: list[str] = []
    original = source.list_pages

    async def list_pages(path, page_size=1000):
        listed.append(path)
        async for page in original(path, page_size):
            yield page

    source.list_pages = list_pages
    return listed


def current(app) -> str | None:
    entry = app.main_screen.browser.current
    return entry.name if entry else None


async def at_last_sample(pilot, folder: str) -> None:
    main = pilot.app.main_screen
    await wait_until(pilot, lambda: main.listing_done and main.path == folder, what="listing")
    await pilot.press("G")


async def test_n_at_the_end_of_a_shard_opens_the_next_shard_and_its_first_sample(tree):
    source = ListingRecorder()
    start = str(tree / "rows_0-2000")
    app = make_app(start, source)
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        await at_last_sample(pilot, start)
        assert current(app) == "data_13.ckpt"
        await pilot.press("n")
        nxt = str(tree / "rows_2000-4000")
        await wait_until(pilot, lambda: main.path == nxt and main.shown is not None, what="next shard")
        assert current(app) == "data_2000.ckpt"
        assert main.shown == f"{nxt}/data_2000.ckpt"  # the sample panel followed
        assert "rows_2000-4000/data_2000.ckpt" in screen_text(app)
        # the parent once (for its folders) and the next shard once: not the whole tree
        assert source.listed == [start, str(tree), nxt]

        # rows_10000-12000 is empty: skipped, never landed in; nothing after it
        await pilot.press("n")
        await wait_until(pilot, lambda: "nor in a shard folder after it" in screen_text(app),
                         what="end of the shards")
        assert main.path == nxt and current(app) == "data_2000.ckpt"
        assert "skipped 1 without samples" in screen_text(app)
        assert source.listed[3:] == [str(tree), str(tree / "rows_10000-12000")]


async def test_p_at_the_start_of_a_shard_goes_to_the_previous_shards_last_sample(tree):
    source = ListingRecorder()
    start = str(tree / "rows_2000-4000")
    app = make_app(start, source)
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.listing_done, what="listing")
        assert current(app) == "data_2000.ckpt"
        await pilot.press("p")
        prev = str(tree / "rows_0-2000")
        await wait_until(pilot, lambda: main.path == prev and current(app) == "data_13.ckpt",
                         what="previous shard")
        assert source.listed == [start, str(tree), prev]
        await pilot.press("p")  # and within the folder, p goes on backwards as before
        assert current(app) == "data_12.ckpt"


async def test_a_folder_without_a_shard_number_does_not_walk(tree):
    source = ListingRecorder()
    app = make_app(tree / "vocab_mapping", source)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
        await pilot.press("n")
        assert current(app) == "vocab_mapping.pt"
        await pilot.press("n")
        assert "no next sample file in this folder" in screen_text(app)
        assert source.listed == [str(tree / "vocab_mapping")]  # the parent was not listed


@pytest_asyncio.fixture
async def box(tmp_path_factory):
    keys = Keys(tmp_path_factory.mktemp("walk-ssh-keys"))
    server = await InProcessServer(keys).start()
    yield server
    await server.stop()


async def test_n_walks_into_the_next_shard_over_ssh(box, tree, tmp_path):
    config, known = write_client_files(tmp_path / "client", "box", box.port, box.keys, trusted=True)
    recorded: dict[str, list[str]] = {}

    async def opener(text, **kwargs):
        opened = await open_target(text, ssh_config=config, known_hosts=known, **kwargs)
        recorded["listed"] = record_listings(opened.source)
        return opened

    start = str(tree / "rows_0-2000")
    app = Eagle3App(f"box:{start}", remote_python=warm_box_python(), opener=opener)
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.listing_done and main.path == start,
                         what="remote listing")
        await pilot.press("G", "n")
        nxt = str(tree / "rows_2000-4000")
        await wait_until(pilot, lambda: main.path == nxt and current(app) == "data_2000.ckpt", what="next remote shard")
        assert " box " in screen_text(app).splitlines()[0]
        assert recorded["listed"] == [start, str(tree), nxt]
