"""The compare view when things go wrong or get big: cancelling, a side that fails to load, sides on
two machines, a long capture, the palette, and start-up staying free of torch."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys

from eagle3_tui.sources.local import LocalSource
from eagle3_tui.ui.browser.pins import Pin
from eagle3_tui.ui.compare.screen import CompareScreen
from eagle3_tui.ui.main.screen import MainScreen
from eagle3_tui.ui.compare.tokens import AlignedTokenTable
from tests.helpers.compare_view import SHARD, compare_done, go_to, started
from tests.helpers.tree import write_specforge
from tests.helpers.tui import make_app, screen_text, wait_until


class GatedSource(LocalSource):
    """The real local source, except that compare() waits at a gate first: a slow remote box.
    Records whether the wait was cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.waiting = False
        self.cancelled = False

    async def compare(self, a, b, **kwargs):
        self.waiting = True
        try:
            await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return await super().compare(a, b, **kwargs)


async def test_escape_cancels_a_running_comparison_then_goes_back(demo):
    source = GatedSource()
    app = make_app(demo / SHARD, source)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await go_to(pilot, demo / SHARD, "data_0.ckpt")
        await pilot.press("t")
        await go_to(pilot, demo / "infer", "ok_bf16_s0.pt")
        await pilot.press("c")
        view = app.screen
        assert isinstance(view, CompareScreen)
        await wait_until(pilot, lambda: source.waiting, what="the comparison to start")
        assert view.query_one("#cmp-body").loading  # the loading indicator is up
        assert "esc cancels" in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: source.cancelled, what="the worker to be cancelled")
        assert app.screen is view, "the first escape only cancels"
        text = screen_text(app)
        assert "comparison cancelled" in text and not view.query_one("#cmp-body").loading
        # r runs it again; this time the box answers
        source.gate.set()
        await pilot.press("r")
        await compare_done(pilot)
        assert "no warning or error" in screen_text(app)
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_a_side_that_fails_to_load_is_shown_in_the_pane(demo, tmp_path):
    shutil.copyfile(demo / SHARD / "data_0.ckpt", tmp_path / "data_0.ckpt")
    (tmp_path / "broken.pt").write_bytes(b"not a torch file at all\n" * 8)
    shutil.copyfile(demo / "vocab_mapping" / "vocab_mapping.pt", tmp_path / "vocab_mapping.pt")
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await go_to(pilot, tmp_path, "broken.pt")
        await pilot.press("t")
        await go_to(pilot, tmp_path, "data_0.ckpt")
        await pilot.press("c")
        await compare_done(pilot)
        text = screen_text(app)
        assert "✗ A cannot be loaded" in text and "broken.pt" in text
        assert "could not run" in text  # and the status line says so
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        # the other way round, a readable file that is no sample: said as such
        await go_to(pilot, tmp_path, "vocab_mapping.pt")
        await pilot.press("i", "c")
        await compare_done(pilot)
        assert "✗ B not a sample" in screen_text(app)
        await pilot.press("q")  # q leaves the view; the app keeps running
        assert isinstance(app.screen, MainScreen) and app.is_running


async def test_sides_on_two_machines_are_refused_with_a_reason(demo):
    app = make_app(demo / SHARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        main = app.main_screen
        # A pinned while the browser showed another machine (a bookmark jump switches hosts)
        main.pins.a = Pin("/data/eagle3/rows_0-2000/data_0.ckpt", "me@gpu-box")
        await go_to(pilot, demo / "infer", "ok_bf16_s0.pt")
        await pilot.press("i")
        text = screen_text(app)
        assert "comparing across machines is not supported" in text
        await pilot.press("c")
        assert app.screen is main
        assert "me@gpu-box" in screen_text(app) and "not supported" in screen_text(app)


async def test_a_long_capture_is_drawn_only_where_it_is_seen(tmp_path):
    """T = 6000: the table is virtual (rows drawn on demand); G reaches the last token."""
    write_specforge(tmp_path / "a.ckpt", tokens=6000, hidden=16)
    write_specforge(tmp_path / "b.ckpt", tokens=6000, hidden=16, seed=0)
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await go_to(pilot, tmp_path, "a.ckpt")
        await pilot.press("t")
        await go_to(pilot, tmp_path, "b.ckpt")
        await pilot.press("c")
        await compare_done(pilot)
        table = app.screen.query_one(AlignedTokenTable)
        assert table.count == 6000 and table.virtual_size.height == 6001
        await pilot.press("G")
        assert table.cursor == 5999
        last = [line for line in screen_text(app).splitlines() if line[1:].lstrip().startswith("5999 ")]
        assert last, "the last token's row is on screen"
        await pilot.press("g")
        assert table.cursor == 0 and table.scroll_offset.y == 0


async def test_palette_pins_and_opens(demo):
    app = make_app(demo / SHARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await go_to(pilot, demo / SHARD, "data_10.ckpt")
        main = app.main_screen
        await pilot.press("ctrl+p", *"pin this")
        await wait_until(pilot, lambda: "Compare: pin" in screen_text(app), what="the palette hit")
        await pilot.press("enter")
        await wait_until(pilot, lambda: main.pins.a is not None, what="the pin")
        assert main.pins.a.path.endswith("data_10.ckpt")
        await go_to(pilot, demo / "infer", "fault_permuted_s10.pt")
        await pilot.press("ctrl+p", *"open the")
        await wait_until(pilot, lambda: "Compare: open" in screen_text(app), what="the palette hit")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), what="the compare view")
        await compare_done(pilot)
        assert "slot_permutation" in screen_text(app)


def test_starting_the_tui_with_the_compare_view_imports_no_torch():
    code = ("import sys, eagle3_tui.ui.app, eagle3_tui.ui.compare.screen, eagle3_tui.ui.compare.panels\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
