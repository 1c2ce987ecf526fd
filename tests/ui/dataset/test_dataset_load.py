"""The dataset view under load: a scan cancelled midway, and 100,000 records in the table."""

from __future__ import annotations

import threading

from tests.helpers.dataset_view import SlowSource, StreamSource, open_dataset, scan_done, without_cache
from tests.helpers.tui import make_app, screen_text, wait_until


def scan_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "eagle3-scan" and t.is_alive()]


async def test_cancel_mid_scan_leaves_a_usable_screen(planted):
    source = SlowSource(delay=0.2)
    app = make_app(planted, source)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, planted, on="README.txt")
        await wait_until(pilot, lambda: len(screen.rows) >= 3, what="first rows")
        assert screen.state == "scanning"
        assert "files" in screen.query_one("#ds-progress-text").text
        await pilot.press("escape")
        await scan_done(pilot, screen, states=("cancelled",))
        total = sum(1 for p in planted.rglob("*") if p.is_file())
        assert 3 <= len(screen.rows) < total
        assert source.closed_scan, "the cancel reached the source's scan"
        await wait_until(pilot, lambda: not scan_threads(), what="the scan thread to stop")
        status = screen.query_one("#ds-status").text
        assert "cancelled" in status and f"after {len(screen.rows)}" in status
        assert "cancelled" in screen_text(app)
        # findings over what was scanned, the table still answers keys
        assert screen.findings_list.option_count >= 1
        before = screen.rows.sort_col
        await pilot.press("s")
        assert screen.rows.sort_col != before
        await pilot.press("j")
        assert screen.table.cursor == 1
        await pilot.press("escape")  # nothing running, no filter: back to the browser
        await wait_until(pilot, lambda: app.screen is app.main_screen, what="back on the main screen")


async def test_100k_records_render_only_visible_rows(planted, template, monkeypatch):
    source = StreamSource(template, 100_000, page=2000)
    without_cache(monkeypatch)
    app = make_app(planted, source)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, planted, on="README.txt")
        await wait_until(pilot, lambda: len(screen.rows) == 100_000, what="100,000 records")
        # G after the scan's end: the findings that come with the end shrink the table, and the
        # cursor's row is scrolled back into view only after that refresh (the table's on_resize);
        # this test is about the rows drawn, so it presses G once the view is settled
        await scan_done(pilot, screen, states=("done",))
        # one copy of each record: the scan pipeline keeps the table's compact records, not the
        # dicts they came from (both was ~750 MiB at 100,000 records, bench_dataset_view)
        shown = {id(r) for r in screen.rows.records}
        assert len(screen.pipeline.records) == 100_000
        assert all(id(r) in shown for r in screen.pipeline.records)
        table = screen.table
        await pilot.pause()
        table.lines_rendered = 0
        table.refresh()
        await pilot.pause()
        height = table.size.height
        assert 0 < table.lines_rendered <= 2 * height, (table.lines_rendered, height)
        await pilot.press("G")
        await pilot.pause()
        assert table.current is screen.rows.records[screen.rows.view[-1]]
        assert "data_99999.ckpt" in screen_text(app), screen_text(app)
        assert table.lines_rendered <= 4 * height
