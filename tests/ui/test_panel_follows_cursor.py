"""The sample panel shows what is under the cursor, never a file left behind (issue 9, item 7),
and the compare view counts tokens from 0 as the sample view, the rows and the JSON do."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from eagle3_tui.ui.compare.screen import CompareScreen
from tests.helpers.tree import write_specforge
from tests.helpers.tui import make_app, screen_text, wait_until


@pytest.fixture
def folder(tmp_path) -> Path:
    root = tmp_path / "ds"
    write_specforge(root / "rows_0-2000" / "data_0.ckpt", tokens=16, hidden=16)
    shutil.copyfile(root / "rows_0-2000" / "data_0.ckpt", root / "rows_0-2000" / "data_1.ckpt")
    (root / "rows_0-2000" / "notes.txt").write_text("x")
    os.mkfifo(root / "rows_0-2000" / "zz_pipe.ckpt")
    return root


def panel(app) -> str:
    """The sample panel's part of the screen (right of the browser)."""
    lines = screen_text(app).splitlines()[1:-2]
    at = lines[0].index("╮") + 1
    return "\n".join(line[at:] for line in lines)


async def test_after_going_up_the_panel_describes_the_folder_not_the_old_file(folder):
    app = make_app(folder / "rows_0-2000")
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown is not None and main.sample.loading_name is None,
                         what="data_0 summary")
        assert "data_0.ckpt" in panel(app)
        await pilot.press("h")
        await wait_until(pilot, lambda: main.listing_done and main.path == str(folder),
                         what="parent listing")
        text = panel(app)
        assert "data_0.ckpt" not in text and "T 16" not in text
        assert "─ rows_0-2000/ ─" in text  # the title names what is under the cursor
        assert "A folder holding 4 entries" in text  # counted when it was listed
        await pilot.press("t")  # nothing shown: t does not pin the file left behind
        assert "put the cursor on a training sample file" in screen_text(app)


async def test_on_a_fifo_or_another_file_the_panel_says_what_it_is(folder):
    app = make_app(folder / "rows_0-2000")
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown is not None and main.sample.loading_name is None,
                         what="data_0 summary")
        await pilot.press("G")  # the FIFO (named like a sample): never opened, said what it is
        assert main.browser.current.name == "zz_pipe.ckpt"
        text = panel(app)
        assert "data_0.ckpt" not in text
        assert "─ zz_pipe.ckpt ─" in text and "FIFO" in text and "never opened" in text
        await pilot.press("k")
        text = panel(app)
        assert "─ notes.txt ─" in text and "l views text" in text and "1 byte:" in text
        await pilot.press("g")  # back on a sample: it is shown again
        await wait_until(pilot, lambda: main.shown is not None and main.sample.loading_name is None,
                         what="data_0 again")
        assert "T 16" in panel(app)


async def test_compare_view_counts_tokens_from_zero_like_the_sample_view(folder):
    app = make_app(folder / "rows_0-2000")
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown is not None and main.sample.loading_name is None,
                         what="data_0 summary")
        assert "token 0/16" in screen_text(app)  # the sample view
        await pilot.press("t", "j", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen)
                         and app.screen.result is not None, what="comparison")
        await pilot.pause()
        text = screen_text(app)
        assert "token 0/16 · B row 0" in text
        await pilot.press("j")
        assert "token 1/16 · B row 1" in screen_text(app)
