"""Dead keys and hidden content (issue 24, rough edge 9), at 120x40 and 80x24: j/k move the
finding selection in the dataset view and, past the last finding, scroll on to the lines under
it; j/k scroll the help; a folder of unreadable files gets no "--model names the layers" hint;
the sample panel does not suggest the CLI's --slots/--hidden."""

from __future__ import annotations

import pytest
import torch

from eagle3_tui.ui.help import HelpScreen
from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.tui import make_app, screen_text, wait_until

SIZES = [(120, 40), (80, 24)]
HINT = "start with --model DIR to name the layers"


@pytest.mark.parametrize("size", SIZES)
async def test_j_and_k_move_the_findings_and_scroll_past_them(planted, size):
    app = make_app(planted)
    async with app.run_test(size=size) as pilot:
        view = await open_dataset(pilot, planted, on="README.txt")
        await scan_done(pilot, view)
        await pilot.press("tab")
        findings = view.findings_list
        assert app.focused is findings and findings.highlighted == 0
        await pilot.press("j", "j")
        assert findings.highlighted == 2
        await pilot.press("k")
        assert findings.highlighted == 1
        await pilot.press(*["j"] * (len(view.findings) + findings.option_count))
        assert findings.highlighted == len(view.findings) - 1  # the last finding stays selected
        assert findings.scroll_offset.y == findings.max_scroll_y  # and the lines under it are shown
        assert HINT in screen_text(app)


@pytest.mark.parametrize("size", SIZES)
async def test_no_layers_hint_on_a_folder_without_a_readable_sample(tmp_path, size):
    for i in range(3):
        (tmp_path / f"data_{i}.ckpt").write_bytes(b"not a torch file " * 20)
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        view = await open_dataset(pilot, tmp_path)
        await scan_done(pilot, view)
        assert view.findings and view.findings[0]["code"] == "unreadable"
        assert HINT not in screen_text(app) and "--model" not in screen_text(app)


@pytest.mark.parametrize("size", SIZES)
async def test_j_scrolls_the_help(tmp_path, size):
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        body = app.screen.query_one("#help-body")
        top = screen_text(app)
        await pilot.press("j", "j", "j")
        assert body.scroll_offset.y == 3 and screen_text(app) != top
        await pilot.press("k")
        assert body.scroll_offset.y == 2


@pytest.mark.parametrize("size", SIZES)
async def test_a_guessed_split_names_no_cli_flag(tmp_path, size):
    torch.manual_seed(0)
    torch.save(torch.randn(24, 3 * 16), tmp_path / "bare.pt")
    app = make_app(tmp_path / "bare.pt")
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown is not None, what="the bare tensor shown")
        text = screen_text(app)
        assert "assumed: k = 3 slots of H = 16" in text
        assert "--slots" not in text and "--hidden" not in text
