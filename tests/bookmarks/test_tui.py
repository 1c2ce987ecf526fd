"""Bookmarks in the TUI, driven by keys: b toggles with a marker, N writes a note, B lists
(filter, edit, delete) and enter jumps back, connecting to the bookmark's host when needed."""

from __future__ import annotations

import posixpath
from pathlib import Path

import pytest

from eagle3_tui.bookmarks import open_store
from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.bookmarks.screen import BookmarksScreen, ConfirmScreen, TextPrompt
from eagle3_tui.ui.start.connect import open_target
from tests.helpers.ssh_servers import write_client_files
from tests.helpers.tree import make_tree
from tests.helpers.tui import make_app, screen_text, wait_until
from tests.helpers.warm_cli import warm_box_python


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return make_tree(tmp_path_factory.mktemp("bm-tree"))


def row_of(app, name: str) -> str:
    """The browser's rendered line for `name` (marker column first)."""
    browser = app.main_screen.browser
    for y in range(browser.size.height):
        text = browser.render_line(y).text
        if name in text:
            return text
    raise AssertionError(f"{name} not on screen")


def marked(app, name: str) -> bool:
    return row_of(app, name).startswith("*")


async def ready(pilot) -> Eagle3App:
    app = pilot.app
    await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
    return app


async def rest_on(pilot, name: str) -> str:
    """Put the browser cursor on `name` and wait until the sample panel shows it."""
    app = pilot.app
    main = app.main_screen
    assert main.browser.move_to_name(name)
    path = posixpath.join(main.path, name)
    await wait_until(pilot, lambda: main.shown == path, what=f"{name} loaded")
    return path


async def test_b_toggles_the_bookmark_and_the_marker(tree):
    shard = tree / "rows_0-2000"
    app = make_app(shard)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        path = await rest_on(pilot, "data_1.ckpt")
        assert not marked(app, "data_1.ckpt")

        await pilot.press("b")
        with open_store() as store:
            b = store.get(path)
        assert b is not None and b.target == str(shard / "data_1.ckpt")
        assert b.headline["tokens"] == 48 and len(b.headline["slots"]) == 3  # what the panel showed
        await pilot.pause()
        assert marked(app, "data_1.ckpt") and not marked(app, "data_0.ckpt")
        assert "bookmarked" in screen_text(app)

        await pilot.press("b")
        await pilot.pause()
        with open_store() as store:
            assert store.get(path) is None
        assert not marked(app, "data_1.ckpt")


async def test_marker_shows_saved_bookmarks_and_another_instances_changes(tree):
    shard = tree / "rows_0-2000"
    with open_store() as store:
        store.add(str(shard / "data_2.ckpt"))
        store.add(f"gpu-box:{shard}/data_10.ckpt")  # same path on another host: not this file
    app = make_app(shard)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.pause()
        assert marked(app, "data_2.ckpt")
        assert not marked(app, "data_10.ckpt")

        with open_store() as other:  # a second eagle3-tui bookmarks a file while we look
            other.add(str(shard / "data_11.ckpt"))
            other.remove(str(shard / "data_2.ckpt"))
        await wait_until(pilot, lambda: marked(app, "data_11.ckpt"), timeout=10, what="poll")
        assert not marked(app, "data_2.ckpt")


async def test_N_adds_then_edits_the_note(tree):
    shard = tree / "rows_0-2000"
    app = make_app(shard)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        path = await rest_on(pilot, "data_12.ckpt")
        await pilot.press("N")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPrompt), what="note prompt")
        await pilot.press(*"NaN row 5", "enter")
        await pilot.pause()
        with open_store() as store:
            b = store.get(path)
        assert b.note == "NaN row 5" and b.headline["nonfinite"] == 1
        assert marked(app, "data_12.ckpt")

        await pilot.press("N")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPrompt), what="note prompt")
        assert app.screen.query_one("Input").value == "NaN row 5"  # the note to edit
        await pilot.press("end", *"; bad", "enter")
        await pilot.press("N")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPrompt), what="note prompt")
        await pilot.press("x", "escape")  # esc cancels: nothing changes
        await pilot.pause()
        with open_store() as store:
            assert store.get(path).note == "NaN row 5; bad"


async def test_B_lists_filters_edits_and_deletes(tree):
    shard = tree / "rows_0-2000"
    with open_store() as store:
        store.add(str(shard / "data_0.ckpt"), note="fine, reference")
        store.add(str(shard / "data_12.ckpt"), note="NaN at row 5", tags=["nan"])
        store.add("gpu-box:/data/eagle3/rows_0-2000/data_7.ckpt", note="remote nan too", tags=["nan"])
    app = make_app(shard)
    async with app.run_test(size=(120, 34)) as pilot:
        await ready(pilot)
        await pilot.press("B")
        await wait_until(pilot, lambda: isinstance(app.screen, BookmarksScreen), what="list")
        screen = app.screen
        assert len(screen.rows) == 3
        text = screen_text(app)
        assert "fine, reference" in text and "gpu-box:" in text and "#nan" in text

        await pilot.press("slash", *"#nan")
        await pilot.pause()
        assert [b.path for b in screen.rows] == [str(shard / "data_12.ckpt"), "/data/eagle3/rows_0-2000/data_7.ckpt"]
        await pilot.press("enter")  # back to the table, filter kept
        await pilot.press("j", "t")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPrompt), what="tags prompt")
        await pilot.press("end", *" gpu", "enter")
        await pilot.pause()
        with open_store() as store:
            assert store.get("gpu-box:/data/eagle3/rows_0-2000/data_7.ckpt").tags == ("nan", "gpu")

        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirm")
        await pilot.press("n")  # no: kept
        await pilot.pause()
        assert len(screen.rows) == 2
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirm")
        await pilot.press("y")
        await pilot.pause()
        assert [b.path for b in screen.rows] == [str(shard / "data_12.ckpt")]

        await pilot.press("escape", "escape")  # clear the filter, then leave
        await pilot.pause()
        assert app.screen is app.main_screen
        with open_store() as store:
            assert [b.path for b in store.list()] == [str(shard / "data_0.ckpt"), str(shard / "data_12.ckpt")]
        assert marked(app, "data_0.ckpt") and marked(app, "data_12.ckpt")


async def test_enter_jumps_to_a_bookmark_in_another_folder(tree):
    target = tree / "rows_2000-4000" / "data_2000.ckpt"
    with open_store() as store:
        store.add(str(target), note="jump here")
    app = make_app(tree / "rows_0-2000")
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("B")
        await wait_until(pilot, lambda: isinstance(app.screen, BookmarksScreen), what="list")
        await pilot.press("enter")
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown == str(target), what="jumped sample loaded")
        assert app.screen is main and main.path == str(target.parent)
        assert main.browser.current.name == "data_2000.ckpt"
        assert marked(app, "data_2000.ckpt")


async def test_jump_connects_to_the_bookmarks_host(box, tree, tmp_path):
    """A bookmark on an SSH host: enter connects there (a real asyncssh server) and loads it."""
    config, known = write_client_files(tmp_path / "client", "box", box.port, box.keys)
    opened: list[str] = []

    async def opener(text, **kwargs):
        opened.append(text)
        return await open_target(text, **{**kwargs, "ssh_config": config, "known_hosts": known})

    remote_file = tree / "rows_0-2000" / "data_10.ckpt"
    with open_store() as store:
        store.add(f"box:{remote_file}", note="on the GPU box")
    app = Eagle3App(str(tree), remote_python=warm_box_python(), opener=opener)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("B")
        await wait_until(pilot, lambda: isinstance(app.screen, BookmarksScreen), what="list")
        await pilot.press("enter")
        main = app.main_screen
        await wait_until(
            pilot,
            lambda: (main.sample.summary or {}).get("path", "").endswith("data_10.ckpt"),
            timeout=60,
            what="remote sample loaded",
        )
        assert opened == [str(tree), f"box:{remote_file}"]
        assert main.where == "box" and main.browser.current.name == "data_10.ckpt"
        assert main.sample.summary.get("computed") == "remote"
        assert marked(app, "data_10.ckpt")  # marks follow the host: box's file is bookmarked
        assert not marked(app, "data_11.ckpt")


async def test_jump_to_a_file_that_is_gone_says_so(tree, tmp_path):
    gone = tmp_path / "rows_0-2000" / "[red]data_5.ckpt"  # shown literally, not as markup
    gone.parent.mkdir()
    (gone.parent / "data_4.ckpt").write_bytes(b"")
    with open_store() as store:
        store.add(str(gone))
    app = make_app(tree)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await ready(pilot)
        await pilot.press("B")
        await wait_until(pilot, lambda: isinstance(app.screen, BookmarksScreen), what="list")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "[red]data_5.ckpt is no longer in" in screen_text(app), what="message")
        assert app.main_screen.path == str(gone.parent)


async def test_palette_opens_the_bookmark_list(tree):
    app = make_app(tree / "rows_0-2000")
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"bookmarks:")
        await wait_until(pilot, lambda: "Bookmarks: list" in screen_text(app), what="palette hit")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, BookmarksScreen), what="list")


async def test_a_damaged_store_is_reported_and_the_app_keeps_working(tree):
    from eagle3_tui.bookmarks import store_path

    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"definitely not sqlite" * 100)
    before = path.read_bytes()
    app = make_app(tree / "rows_0-2000")
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await rest_on(pilot, "data_1.ckpt")
        await pilot.press("b")
        await pilot.pause()
        assert "not an SQLite database" in screen_text(app)
        await pilot.press("j")  # still answers keys
        await wait_until(pilot, lambda: app.main_screen.browser.current.name == "data_2.ckpt", what="move")
    assert path.read_bytes() == before
