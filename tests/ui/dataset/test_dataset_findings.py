"""The dataset view's findings: computed in a child process (the TUI never imports torch for
them) while the view says so and answers keys, the same as in-process, cached, and stopped when
the view goes. And keys answered while records stream in."""

from __future__ import annotations

import asyncio
import signal
import threading

import pytest

from eagle3_tui.dataset.findings import dataset_findings
from eagle3_tui.dataset.findings_child import ChildRuns, FindingsCancelled
from eagle3_tui.ui.dataset.screen import DatasetScreen
from tests.helpers.dataset_view import StreamSource, open_dataset, scan_done, without_cache
from tests.helpers.tui import make_app, screen_text, wait_until

# the child process is what this module is about: real ones (tests/ui/conftest.py)
REAL_FINDINGS_CHILD = True
class GatedRuns(ChildRuns):
    """The real child, started only when the test opens the gate: the findings are held at a
    known point. Every instance is kept, with the pid of its child."""

    gate = threading.Event()
    made: list[GatedRuns] = []

    def __init__(self, cancelled) -> None:
        super().__init__(cancelled)
        self.entered = threading.Event()
        GatedRuns.made.append(self)

    def __call__(self, values, shard_of):
        self.entered.set()
        while not self.gate.wait(0.02):
            if self.cancelled():
                raise FindingsCancelled()
        return super().__call__(values, shard_of)


@pytest.fixture
def gated(monkeypatch):
    GatedRuns.gate = threading.Event()
    GatedRuns.made = []
    monkeypatch.setattr(DatasetScreen, "layer_runs", GatedRuns)
    return GatedRuns


def child_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


async def test_findings_come_from_a_child_while_the_view_says_so_and_answers_keys(planted, gated):
    app = make_app(planted)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, planted, on="README.txt")
        await wait_until(pilot, lambda: gated.made and gated.made[0].entered.is_set(),
                         what="the findings to start")
        assert screen.state == "findings"
        files = len(screen.rows)
        text = screen_text(app)
        assert f"computing the findings over {files} files" in text, text
        assert "computing findings" in screen.query_one("#ds-status").text
        await pilot.press("j", "j")
        assert screen.table.cursor == 2, "a key is answered while the findings are computed"
        gated.gate.set()
        await scan_done(pilot, screen)
        assert gated.made[0].pid is not None, "the layer_group search ran in a child process"
        # the same findings as computed in this process (torch here), layer_group included
        assert screen.findings == dataset_findings(list(screen.rows.records))
        assert "layer_group" in [f["code"] for f in screen.findings]
        assert "computing the findings" not in screen_text(app)

        # a second look at the unchanged dataset: the findings come from the cache, no child
        await pilot.press("q")
        await wait_until(pilot, lambda: app.screen is app.main_screen, what="back on the main screen")
        first = screen.findings
        await pilot.press("D")
        await wait_until(pilot, lambda: isinstance(app.screen, DatasetScreen) and app.screen is not screen,
                         what="the dataset view again")
        again = app.screen
        await scan_done(pilot, again)
        assert again.findings == first
        assert len(gated.made) == 2 and not gated.made[1].entered.is_set(), "cached findings start no child"


async def test_leaving_the_view_stops_the_findings_child(planted, gated):
    gated.gate.set()
    app = make_app(planted)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, planted, on="README.txt")
        await wait_until(pilot, lambda: gated.made and gated.made[0].pid is not None,
                         what="the findings child to start")
        pid = gated.made[0].pid
        assert screen.state == "findings"
        await pilot.press("q")
        await wait_until(pilot, lambda: app.screen is app.main_screen, what="back on the main screen")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: not child_alive(pid), what="the findings child gone")
        # killed, not left to finish (its torch import alone outlasts a key press)
        assert gated.made[0].returncode == -signal.SIGKILL, gated.made[0].returncode
        assert screen.findings == []


class HeldStream(StreamSource):
    """Streams records, stopping before record number h of each h in `holds` until the test
    releases it (go()): the scan is surely still running while the test looks and presses keys."""

    def __init__(self, template: dict, count: int, holds: tuple[int, ...]) -> None:
        super().__init__(template, count, page=500)
        self.holds = {h: asyncio.Event() for h in holds}

    def go(self, hold: int) -> None:
        self.holds[hold].set()

    async def scan(self, path, **kwargs):
        sent = 0
        async for item in super().scan(path, **kwargs):
            if "progress" not in item:
                if sent in self.holds:
                    await self.holds[sent].wait()
                sent += 1
            yield item


async def test_keys_are_answered_and_rows_redrawn_while_records_stream_in(planted, template, monkeypatch):
    # the strips (which redraw the table too) binned once only: what redraws the rows here is
    # the records' arrival alone
    monkeypatch.setattr("eagle3_tui.ui.dataset.binning.BINS_SECONDS", 1e9)
    source = HeldStream(template, 6000, holds=(2000, 4000))
    without_cache(monkeypatch)
    app = make_app(planted, source)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, planted, on="README.txt")
        table = screen.table
        await wait_until(pilot, lambda: len(screen.rows) == 2000, what="the first 2,000 records")
        # sorted by index, descending: the next records land above the rows on screen, which
        # must then be drawn again although nothing else about them changed
        while screen.rows.sort_col != "index":
            await pilot.press("s")
        await pilot.press("S")
        await wait_until(pilot, lambda: "data_1999.ckpt" in screen_text(app), what="the highest index on top")
        source.go(2000)
        await wait_until(pilot, lambda: len(screen.rows) == 4000, what="4,000 records")
        await wait_until(pilot, lambda: "data_3999.ckpt" in screen_text(app), what="the new highest index on top")
        assert "data_1999.ckpt" not in screen_text(app)
        # keys while the scan runs: the cursor moves, and keeps its file as more land above
        assert screen.state == "scanning"
        await pilot.press("j", "j", "j")
        assert table.cursor == 3 and table.current.path.endswith("/data_3996.ckpt")
        source.go(4000)
        await wait_until(pilot, lambda: len(screen.rows) == 6000, what="every record")
        assert table.current.path.endswith("/data_3996.ckpt")
        await wait_until(pilot, lambda: "data_3997.ckpt" in screen_text(app), what="the cursor's neighbours drawn")
        await scan_done(pilot, screen)
