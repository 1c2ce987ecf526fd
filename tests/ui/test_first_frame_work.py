"""What the first frame no longer pays for (issue 32, tui_first_frame): the footer is not rebuilt
for keys it already shows, and the collector, off while `eagle3-tui` starts, is on again after
the first frame with the start-up's garbage collected rather than frozen."""

from __future__ import annotations

import gc
import weakref

import pytest
from textual.widgets._footer import FooterKey

from tests.helpers.tui import make_app, screen_text, wait_until


def footer_keys(app) -> list[FooterKey]:
    return list(app.screen.query(FooterKey))


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_footer_keeps_its_keys_when_the_bindings_are_the_same(tree, size):
    app = make_app(tree)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
        await pilot.pause()
        before, text = footer_keys(app), screen_text(app).splitlines()[-1]
        assert "Help" in text and "Next" in text
        app.screen.refresh_bindings()  # what a focus change does: the footer hears of it
        await pilot.pause()
        await pilot.pause()
        after = footer_keys(app)
        assert [id(k) for k in after] == [id(k) for k in before]  # not rebuilt
        assert screen_text(app).splitlines()[-1] == text


async def test_footer_follows_keys_that_change(tree):
    app = make_app(tree)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
        await pilot.press("question_mark")  # another screen, other keys
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        await pilot.pause()
        text = screen_text(app).splitlines()[-1]
        assert "Quit" in text and "Dataset" in text


class _Cycle:
    def __init__(self) -> None:
        self.me = self


async def test_collector_is_on_after_the_first_frame_and_startup_garbage_collected(tree):
    gc.disable()  # as `eagle3-tui` starts (commands/tui.py)
    try:
        garbage = _Cycle()
        gone = weakref.ref(garbage)
        del garbage  # a cycle: only the collector frees it
        app = make_app(tree)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
            await pilot.pause()
            assert gc.isenabled()
            assert gone() is None  # collected, not frozen for the life of the app
    finally:
        gc.enable()
        gc.unfreeze()  # the test run's other objects go back to the collector
