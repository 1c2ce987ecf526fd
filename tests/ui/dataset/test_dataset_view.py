"""The dataset view (D) over the planted dataset: findings, the table, sorting, filtering to a
finding's files, enter opening the sample in the main screen, and the browser's scan marks."""

from __future__ import annotations

import pytest

from eagle3_tui.ui.main.screen import MainScreen
from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.tui import make_app, screen_text, wait_until

NAN_FILE = "rows_0-12/data_2.ckpt"
TRUNCATED = "rows_24-36/data_30.ckpt"


def files_under(root) -> int:
    return sum(1 for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


async def test_findings_table_sort_filter_open_and_marks(planted):
    app = make_app(planted)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, planted, on="README.txt")  # a file: the open folder is scanned
        await scan_done(pilot, screen)
        text = screen_text(app)
        # findings on top, in words, worst first, with their numbers
        codes = [f["code"] for f in screen.findings]
        for code in ("unreadable", "nonfinite", "layout_mismatch", "layer_group", "empty_loss_mask",
                     "loss_on_padding", "duplicate", "missing_index"):
            assert code in codes
        assert codes[0] in ("unreadable", "nonfinite", "layout_mismatch")
        assert "ERROR unreadable (1 file)" in text
        assert "WARN" in text and "data_30.ckpt" in text
        # every file is a row; the strip shows each slot
        assert len(screen.rows) == files_under(planted)
        assert "slot 0" in text and "final" in text
        # the truncated file reads as an error row, the NaN file as an error too
        status = {r.path: r.status for r in screen.rows.records}
        assert status[TRUNCATED] == "error" and status[NAN_FILE] == "error"
        assert status["rows_0-12/data_0.ckpt"] == "ok"

        # sorting: s cycles columns, S reverses; the header shows the arrow
        table = screen.table
        while screen.rows.sort_col != "slot0":
            await pilot.press("s")
        values = [screen.rows.records[i].slots[0].norm_mean for i in screen.rows.view
                  if screen.rows.records[i].get("slots")]
        assert values == sorted(values)
        await pilot.press("S")
        values = [screen.rows.records[i].slots[0].norm_mean for i in screen.rows.view
                  if screen.rows.records[i].get("slots")]
        assert values == sorted(values, reverse=True)
        assert "slot 0▼" in screen_text(app)
        # files without the column (errors, not samples) sort last either way
        assert "slots" not in screen.rows.records[screen.rows.view[-1]]

        # a finding: select it, enter filters the table to its files; enter again shows all
        findings = screen.findings_list
        findings.focus()
        nonfinite = codes.index("nonfinite")
        findings.highlighted = nonfinite
        await pilot.press("enter")
        assert [screen.rows.records[i].path for i in screen.rows.view] == [NAN_FILE]
        assert "showing the 1 files of nonfinite" in screen_text(app)
        await pilot.press("enter")
        assert len(screen.rows.view) == len(screen.rows)
        await pilot.press("enter")  # filter again, then open the file from the table
        await pilot.press("tab")
        assert app.screen.focused is table
        await pilot.press("enter")
        main = app.main_screen
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), what="back on the main screen")
        await wait_until(pilot, lambda: main.browser.current is not None and main.browser.current.name == "data_2.ckpt"
                         and main.path.endswith("rows_0-12"), what="browser on the file")
        main.debounce_seconds = 0.01
        main.schedule_load(main.file_under_cursor(), delay=0)
        await wait_until(pilot, lambda: main.shown is not None and main.shown.endswith(NAN_FILE), what="sample shown")

        # the browser marks what the scan found in this folder (from the record cache)
        await wait_until(pilot, lambda: main.browser.scan_marks.get("data_2.ckpt") == "error", what="scan marks")
        assert main.browser.scan_marks["data_0.ckpt"] == "ok"
        shown = screen_text(app)
        assert "✗data_2.ckpt" in shown.replace(" ", "") and "✓data_0.ckpt" in shown.replace(" ", "")


async def test_small_terminal_shows_findings_strip_and_rows(planted):
    app = make_app(planted)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_dataset(pilot, planted / "rows_24-36", on="data_24.ckpt")
        await scan_done(pilot, screen)
        text = screen_text(app).splitlines()
        assert len(text) == 24 and all(len(line) <= 80 for line in text)
        joined = "\n".join(text)
        assert "ERROR" in joined  # the truncated file, the bfloat16 file
        assert "slot 0" in joined
        assert sum("data_" in line for line in text) >= 4, joined  # rows of the table are visible
        assert "# file▲" in joined.replace("  ", " ") or "file▲" in joined


async def test_b_and_t_reach_the_main_screen(planted):
    app = make_app(planted)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, planted / "rows_0-12", on="data_0.ckpt")
        await scan_done(pilot, screen)
        screen.table.focus()
        first = screen.table.current.path
        await pilot.press("b")
        await wait_until(pilot, lambda: "bookmarked " in screen.query_one("#ds-status").text, what="bookmark said")
        assert screen.query_one("#ds-status").text.endswith(first)
        await pilot.press("t")
        await wait_until(pilot, lambda: "A" in screen.query_one("#ds-status").text, what="pin said")
        main = app.main_screen
        assert main.pins.a is not None and main.pins.a.path.endswith(first)
        assert main.bookmarking.key_of(main.pins.a.path) in main.bookmarking.store().keys()
