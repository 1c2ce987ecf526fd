"""Issue 34.4 on screen: P on a capture whose token ids are all 0 pairs it by hidden states, says
so in the status line, and the compare view compares its rows (before: it aligned the zeros with
A's padding and compared nothing), at 120x40 and 80x24."""

from __future__ import annotations

import shutil

import pytest

from eagle3_tui.ui.compare.screen import CompareScreen
from tests.helpers.compare_view import SHARD, compare_done, go_to, started
from tests.helpers.tui import make_app, screen_text, wait_until
from tests.pair.test_blank_ids import blank_capture


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_p_on_a_capture_of_blank_ids_pairs_and_compares_by_states(demo, tmp_path, size):
    shard = tmp_path / SHARD
    shard.mkdir(parents=True)
    for i in (0, 1, 2, 4):
        shutil.copy(demo / SHARD / f"data_{i}.ckpt", shard)
    blank_capture(demo, tmp_path / "infer")
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await started(pilot)
        await go_to(pilot, tmp_path / "infer", "padded_ids.pt")
        await pilot.press("P")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), what="the compare view")
        await compare_done(pilot)
        view = app.screen
        assert view.a == str(shard / "data_0.ckpt")
        result = view.result
        codes = [f["code"] for f in result["findings"]]
        assert "nothing_compared" not in codes and "ids_uninformative" in codes
        assert result["alignment"]["method"] == "hidden" and result["alignment"]["length"] == 102
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.main_screen, what="back in the browser")
        said = app.main_screen.status_line.render().plain
        assert "by hidden states" in said and "token ids" not in said.split("by hidden states")[0], said
        assert "all 0" in app.main_screen.status_line.text
        assert "paired with" in screen_text(app)
