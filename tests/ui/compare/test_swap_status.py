"""After s in the compare view and esc back, the browser's status line and its pins line agree
on which file is A and which is B (issue 24, rough edge 7): the line that named the old B
does not stay."""

from __future__ import annotations

import pytest

from eagle3_tui.ui.compare.screen import CompareScreen
from tests.helpers.compare_view import compare_done, listing_done
from tests.helpers.tree import make_tree
from tests.helpers.tui import make_app, screen_text


@pytest.fixture(scope="module")
def shard(tmp_path_factory):
    return make_tree(tmp_path_factory.mktemp("swap-tree")) / "rows_0-2000"


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_status_and_pins_agree_after_a_swap(shard, size):
    app = make_app(shard)
    async with app.run_test(size=size) as pilot:
        await listing_done(pilot)
        main = app.main_screen
        await pilot.press("t", "j", "i")
        assert "inference side B: data_1.ckpt" in screen_text(app)
        await pilot.press("c")
        assert isinstance(app.screen, CompareScreen)
        await compare_done(pilot)
        await pilot.press("s")
        await compare_done(pilot)
        await pilot.press("escape")
        assert app.screen is main
        await pilot.pause()
        lines = screen_text(app).splitlines()
        pins, status = lines[-3], lines[-2]
        assert "A data_1.ckpt" in pins and "B data_0.ckpt" in pins
        assert "inference side B: data_1.ckpt" not in status
        assert "A is data_1.ckpt" in status and "B is data_0.ckpt" in status
