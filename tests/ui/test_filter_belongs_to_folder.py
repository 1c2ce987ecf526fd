"""A filter belongs to the folder it was typed in (issue 24, rough edge 1): `l` into another
folder lists it whole, coming back finds the filter again, and a jump to a file (a bookmark)
lands on that file whatever filter was active. A kept filter's box is not a tab stop."""

from __future__ import annotations

import pytest

from eagle3_tui.bookmarks import open_store
from eagle3_tui.ui.bookmarks.screen import BookmarksScreen
from eagle3_tui.ui.browser.browser import BrowserList
from tests.helpers.tree import make_tree
from tests.helpers.tui import make_app, screen_text, wait_until

SIZES = [(120, 40), (80, 24)]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return make_tree(tmp_path_factory.mktemp("filter-tree"))


def names(app) -> list[str]:
    return [e.name for e in app.main_screen.browser.rows]


async def listed(pilot, path) -> None:
    main = pilot.app.main_screen
    await wait_until(pilot, lambda: main.listing_done and main.path == str(path), what=f"{path} listed")


@pytest.mark.parametrize("size", SIZES)
async def test_the_filter_stays_in_its_folder(tree, size):
    app = make_app(tree)
    async with app.run_test(size=size) as pilot:
        await listed(pilot, tree)
        await pilot.press("slash", "r", "o", "w", "s", "_", "0", "enter")
        assert names(app) == ["rows_0-2000"]
        await pilot.press("l")
        await listed(pilot, tree / "rows_0-2000")
        assert len(names(app)) == 7
        text = screen_text(app)
        assert "7 entries" in text and "match" not in text.splitlines()[0]
        assert "data_12.ckpt" in text

        await pilot.press("h")  # back where it was typed: the filter is there again
        await listed(pilot, tree)
        assert names(app) == ["rows_0-2000"]
        assert "1 of 6 entries match /rows_0" in screen_text(app)


@pytest.mark.parametrize("size", SIZES)
async def test_a_bookmark_jump_lands_on_the_file_whatever_the_filter(tree, size):
    shard = tree / "rows_0-2000"
    elsewhere = tree / "rows_2000-4000" / "data_2000.ckpt"
    hidden = shard / "data_12.ckpt"
    with open_store() as store:
        for b in store.list():
            store.delete(b.path)
        store.add(str(elsewhere), note="another folder")
        store.add(str(hidden), note="same folder")
    app = make_app(shard)
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await listed(pilot, shard)
        for target in (elsewhere, hidden):
            await pilot.press("escape", "slash", "1", "0", "enter")  # /10: hides both targets
            assert names(app) == ["data_10.ckpt"]
            await pilot.press("B")
            await wait_until(pilot, lambda: isinstance(app.screen, BookmarksScreen), what="list")
            await pilot.press("slash", *list(str(target.name).split(".")[0]), "enter", "enter")
            await wait_until(pilot, lambda t=target: main.shown == str(t), what=f"{target.name} shown")
            assert main.browser.current.name == target.name
            assert "match /10" not in screen_text(app)
            await pilot.press("escape")  # nothing left to clear: the cursor stays on the file
            assert main.browser.current.name == target.name
            if target is elsewhere:
                await pilot.press("h", "k")  # back to rows_0-2000 for the same-folder case
                await pilot.press("l")
                await listed(pilot, shard)


@pytest.mark.parametrize("size", SIZES)
async def test_tab_goes_past_a_kept_filter_to_the_token_table(tree, size):
    shard = tree / "rows_0-2000"
    app = make_app(shard)
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await listed(pilot, shard)
        await pilot.press("slash", "1", "2", "enter")
        await wait_until(pilot, lambda: main.shown == str(shard / "data_12.ckpt"), what="data_12 shown")
        assert isinstance(app.focused, BrowserList)
        await pilot.press("tab")
        assert app.focused is not None and app.focused.id == "token-table"
        await pilot.press("tab")
        assert isinstance(app.focused, BrowserList)
        await pilot.press("slash", "backspace", "3", "enter")  # / edits the kept filter
        assert names(app) == ["data_13.ckpt"]
