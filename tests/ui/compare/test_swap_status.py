"""After s in the compare view and esc back, the browser's status line and its pins line agree
on which file is A and which is B (issue 24, rough edge 7): the line that named the old B
does not stay; and both, and the compare view's header, name each side as it now is: A is the
capture, B the training sample (issue 57: the bar said "training side A is" the capture)."""

from __future__ import annotations

import re

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
        head = "\n".join(screen_text(app).splitlines()[:2])  # one line at 80x24, a line per side when tall
        assert re.search(r"A inference .*data_1\.ckpt", head) and re.search(r"B training +.*data_0\.ckpt", head), head
        await pilot.press("escape")
        assert app.screen is main
        await pilot.pause()
        lines = screen_text(app).splitlines()
        pins, status = lines[-3], lines[-2]
        assert "A data_1.ckpt (inference)" in pins and "B data_0.ckpt (training)" in pins, pins
        assert pins.rstrip().endswith("c compares"), pins  # the whole bar, at 80 columns too
        assert "inference side B: data_1.ckpt" not in status and "training side A" not in status
        assert "A is data_1.ckpt (inference)" in status and "B is data_0.ckpt (training)" in status
        # c opens the view the way round the pins are, each side named as it is
        await pilot.press("c")
        await compare_done(pilot)
        assert re.search(r"A inference .*data_1\.ckpt", screen_text(app).splitlines()[0])
        await pilot.press("escape")
        # t pins a training sample as A again: the sides are named as usual, no "(training)" mark
        await pilot.press("t")
        await pilot.pause()
        pins = screen_text(app).splitlines()[-3]
        assert "(inference)" not in pins and "(training)" not in pins, pins
