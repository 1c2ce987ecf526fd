"""The token table's tab stop and its search leave nothing stale behind (issue 24, rough edges
2 and 7): tab out of the table shows the sample's header again; esc ends a search and the status
line and the footer say so, and n is the next file again."""

from __future__ import annotations

import pytest

from eagle3_tui.ui.browser.browser import BrowserList
from eagle3_tui.ui.sample.token_table import TokenTable
from tests.helpers.tui import screen_text, text_app, wait_until

SIZES = [(120, 40), (80, 24)]


async def open_first(pilot) -> None:
    main = pilot.app.main_screen
    await wait_until(pilot, lambda: (main.sample.summary or {}).get("path", "").endswith("data_0.ckpt"),
                     what="data_0 loaded")


def footer(app) -> str:
    return screen_text(app).splitlines()[-1]


def status(app) -> str:
    return screen_text(app).splitlines()[-2]


def header_on_screen(app) -> bool:
    text = screen_text(app)
    return "slot " in text and " b " in text and "SpecForge" in text


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_tab_out_of_the_token_table_shows_the_header_again(chats, tokenizer_dir, tmp_path, size):
    app = text_app(chats / "rows_0-2000", tokenizer_dir, tmp_path)
    async with app.run_test(size=size) as pilot:
        await open_first(pilot)
        pane = app.main_screen.pane
        assert header_on_screen(app)
        await pilot.press("tab")
        assert isinstance(app.focused, TokenTable)
        assert pane.scroll_offset.y > 0  # the table was scrolled into view
        await pilot.press("tab")
        assert isinstance(app.focused, BrowserList)
        await pilot.pause()
        assert pane.scroll_offset.y == 0
        assert header_on_screen(app)


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES)
async def test_esc_ends_the_search_in_the_status_and_the_footer(chats, tokenizer_dir, tmp_path, size):
    app = text_app(chats / "rows_0-2000", tokenizer_dir, tmp_path)
    async with app.run_test(size=size) as pilot:
        await open_first(pilot)
        await pilot.press("tab", "slash", *"capital", "enter")
        await pilot.pause()
        assert "/capital: token" in status(app)
        assert "Next match" in footer(app)
        await pilot.press("escape")
        await pilot.pause()
        assert "/capital: token" not in status(app) and "search ended" in status(app)
        assert "Next match" not in footer(app) and "Next" in footer(app)
        await pilot.press("n")
        await wait_until(pilot, lambda: (app.main_screen.sample.summary or {}).get("path", "").endswith(
            "data_1.ckpt"), what="the next file")
