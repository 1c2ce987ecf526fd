"""After enter on a file in the dataset view (D), the browser shows the sample; esc, or D inside
the scanned folder, returns to the view as it was: its sort, its filter and the file under the
cursor, with no new scan (issue 24, rough edge 9). Leaving the view by esc drops it: D then
scans again."""

from __future__ import annotations

import pytest

from eagle3_tui.ui.dataset.screen import DatasetScreen
from eagle3_tui.ui.main.screen import MainScreen
from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.tui import make_app, screen_text, wait_until


def under_cursor(screen) -> str:
    return screen.rows.records[screen.rows.view[screen.table.cursor]].path


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@pytest.mark.parametrize("back", ["escape", "D"])
async def test_esc_or_D_returns_to_the_view_as_it_was(planted, size, back):
    app = make_app(planted)
    async with app.run_test(size=size) as pilot:
        view = await open_dataset(pilot, planted, on="README.txt")
        await scan_done(pilot, view)
        while view.rows.sort_col != "slot0":
            await pilot.press("s")
        await pilot.press("S", "j", "j", "j")
        sort = (view.rows.sort_col, view.rows.descending)
        chosen = under_cursor(view)
        await pilot.press("enter")
        main = app.main_screen
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), what="the browser")
        name = chosen.rsplit("/", 1)[-1]
        await wait_until(pilot, lambda: main.browser.current is not None and main.browser.current.name == name,
                         what="the browser on the file")
        generation = view.generation
        await pilot.press(back)
        await wait_until(pilot, lambda: app.screen is view, what="the same dataset view")
        assert view.generation == generation and view.state == "done"  # no new scan
        assert (view.rows.sort_col, view.rows.descending) == sort
        assert under_cursor(view) == chosen
        assert "slot 0▼" in screen_text(app)

        await pilot.press("escape")  # leaving the view by esc drops it: D scans anew
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), what="the browser again")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is main
        await pilot.press("h")
        await wait_until(pilot, lambda: main.listing_done and main.path == str(planted), what="the top folder")
        await pilot.press("D")
        await wait_until(pilot, lambda: isinstance(app.screen, DatasetScreen), what="a dataset view")
        assert app.screen is not view


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_enter_on_a_text_file_in_the_view_opens_it_as_text(planted, size):
    """README.txt among the samples: enter shows its text (as l does in the browser), not a
    "not a torch file" panel; esc goes back to the browser on it, esc again to the view."""
    app = make_app(planted)
    async with app.run_test(size=size) as pilot:
        view = await open_dataset(pilot, planted, on="README.txt")
        await scan_done(pilot, view)
        for _ in range(len(view.rows.view)):
            if under_cursor(view) == "README.txt":
                break
            await pilot.press("j")
        assert under_cursor(view) == "README.txt", [view.rows.records[i].path for i in view.rows.view]
        await pilot.press("enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "TextViewScreen", what="the text viewer")
        assert (planted / "README.txt").read_text().splitlines()[0][:40] in screen_text(app)
        await pilot.press("escape")
        main = app.main_screen
        await wait_until(pilot, lambda: app.screen is main and main.browser.current is not None
                         and main.browser.current.name == "README.txt", what="the browser on README.txt")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is view, what="the dataset view as it was")
