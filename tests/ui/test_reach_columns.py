"""Rough edge 6 of issue 24: no column cut without a way to reach it. ←/→ scroll the compare
view's slot columns and the sample's token table (80x24: slot 2 and the final state are off
screen at first); at 120 columns every pair of compare fits, the final's cosine included; the
sample panel's lines are read whole (wrapped, never ending in "…"), and the drafter's guess at
the cursor is the token's text when a tokenizer reads the sample."""

from __future__ import annotations

import re

import pytest

from eagle3_tui.ui.compare.screen import CompareScreen
from tests.helpers.compare_view import SHARD, compare_done, go_to, started
from tests.helpers.tui import screen_text, text_app, wait_until

SIZES = [(120, 40), (80, 24)]
COMPARE_HEADS = ["‖A0‖", "cos0", "‖A1‖", "cos1", "‖A2‖", "‖B2‖", "cos2", "‖Af‖", "‖Bf‖", "cosf"]


async def _press_right_collecting(pilot, line_of, times: int) -> str:
    """Press → `times` times, gathering the lines `line_of(text)` picks on each screen."""
    seen = [line_of(screen_text(pilot.app))]
    for _ in range(times):
        await pilot.press("right")
        seen.append(line_of(screen_text(pilot.app)))
    return "\n".join(seen)


def _compare_head(text: str) -> str:
    return next(line for line in text.splitlines() if " row " in line and "│" in line)


@pytest.mark.parametrize("size", SIZES)
async def test_every_compare_column_is_reached_with_the_arrows(demo, tmp_path, size):
    # with the token text (--tokenizer): the text columns take room from the pairs
    app = text_app(demo / SHARD / "data_0.ckpt", demo / "model", tmp_path)
    async with app.run_test(size=size) as pilot:
        await started(pilot)
        await go_to(pilot, demo / SHARD, "data_0.ckpt")
        await pilot.press("t")
        await go_to(pilot, demo / "infer", "ok_bf16_s0.pt")
        await pilot.press("c")
        assert isinstance(app.screen, CompareScreen)
        await compare_done(pilot)
        first = _compare_head(screen_text(app))
        if size[0] >= 120:  # every pair fits: the final's cosine is on screen without scrolling
            assert all(h in first for h in COMPARE_HEADS), first
            row0 = screen_text(app).splitlines()[screen_text(app).splitlines().index(first) + 1]
            assert len(re.findall(r"[01]\.\d{4}", row0)) == 4, row0  # 3 slots and the final, whole
        else:
            assert "cosf" not in first  # 80 columns: the final starts off screen
        seen = await _press_right_collecting(pilot, _compare_head, 6)
        assert all(h in seen for h in COMPARE_HEADS), seen
        assert " row " in _compare_head(screen_text(app))  # the row and id columns stay put
        for _ in range(6):
            await pilot.press("left")
        assert "‖A0‖" in _compare_head(screen_text(app))  # and ← brings the first pair back


def _has_token_head(text: str) -> bool:
    return any(" # " in line and " loss" in line for line in text.splitlines())


def _token_head(text: str) -> str:
    return next(line for line in text.splitlines() if " # " in line and " loss" in line)


@pytest.mark.parametrize("size", SIZES)
async def test_every_token_table_column_is_reached_with_the_arrows(demo, tmp_path, size):
    app = text_app(demo / SHARD / "data_0.ckpt", demo / "model", tmp_path)
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown is not None, what="data_0 shown")
        await pilot.press("tab")
        await wait_until(pilot, lambda: _has_token_head(screen_text(app)), what="the token table's head")
        first = _token_head(screen_text(app))
        if size[0] < 120:
            assert "final" not in first  # at 80x24 the last columns start off screen
        seen = await _press_right_collecting(pilot, _token_head, 8)
        for column in ("id", "text", "loss", "aux0", "aux1", "aux2", "final"):
            assert column in seen, seen
        assert _token_head(screen_text(app)).split("││")[-1].lstrip().startswith("#")  # the index stays put


@pytest.mark.parametrize("size", SIZES)
async def test_sample_lines_are_read_whole_and_the_guess_is_text(demo_drafter, tmp_path, size):
    demo = demo_drafter
    app = text_app(demo / SHARD / "data_0.ckpt", demo / "model", tmp_path, drafter=str(demo / "drafter"))
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown is not None, what="data_0 shown")
        await wait_until(pilot, lambda: (main.sample.acceptance or {}).get("per_token") is not None, what="the drafter's result")
        guess = next(t for t in main.sample.acceptance["per_token"] if t["hit"])
        main.sample.set_token(guess["row"])
        await pilot.pause()
        panel = main.sample.render().plain
        assert "49 padding rows" in panel
        assert not [line for line in panel.splitlines() if line.rstrip().endswith("…")], panel
        assert f"drafter guesses token {guess['row'] + 2}: \"" in " ".join(panel.split()), panel
        assert f"id {guess['draft']} p" not in panel  # the text, not the id
