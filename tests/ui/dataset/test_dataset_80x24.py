"""Issue 57 items 4 and 8: the dataset view at 80x24 as the new user ran it (--model and
--drafter: the layers, the serve-check, the acceptance step) keeps 8 file rows (1 had been
left), tab gives the findings and the serve-check their room in turn, and every count says what it
counts: the top-1 column's "-" (the step scores a few files per group) and the layers' two counts
(named from one file per group; the others only checked against the majority)."""

from __future__ import annotations

import re

from eagle3_tui.sources.local import LocalSource
from eagle3_tui.ui.start.analysis import Analysis
from tests.helpers.dataset_view import open_dataset
from tests.helpers.tui import make_app, screen_text, wait_until


def _file_rows(lines: list[str]) -> list[str]:
    """The file table's rows on screen: a status mark, the index, the top-1 cell, the file."""
    return [line for line in lines if re.match(r"^[✓!✗·] +\d+ +(-|\d+\.\d%) ", line)]


async def test_80x24_keeps_8_file_rows_and_says_what_each_count_is(demo_drafter):
    demo = demo_drafter
    app = make_app(demo / "train", LocalSource())
    app.analysis = Analysis.from_options(model=str(demo / "model"), drafter=str(demo / "drafter"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_dataset(pilot, demo / "train", on="rows_0-2000")
        await wait_until(pilot, lambda: screen.accept_state == "done" and screen.serving.state in ("done", "failed"),
                         what="the layers, the serve-check and the acceptance step")
        await app.workers.wait_for_complete()
        await pilot.pause()
        lines = screen_text(app).splitlines()
        text = "\n".join(lines)
        rows = _file_rows(lines)
        assert len(rows) >= 8, text
        # above them: the first findings, the serve-check's verdict with its first engines
        assert "findings" in lines[1] and "missing_index" in text, text
        assert "serve-check: " in text and "(tab: the fix)" in text, text
        # the status line says why most top-1 cells are "-": 4 files per group were scored
        scored = [r for r in rows if "%" in r.split()[2]]
        assert scored and len(scored) < len(rows), text
        assert 'top-1 on 4 of 24 files (4 per group, a drafter pass each); "-": not scored' in lines[-2], text

        # tab: the findings grow, the table keeps a few rows and the status line stays
        await pilot.press("tab")
        await wait_until(pilot, lambda: screen.focused is screen.findings_list, what="the findings focused")
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert "layers_checked" in "\n".join(lines), "\n".join(lines)
        assert len(_file_rows(lines)) >= 3 and "top-1 on 4 of 24" in lines[-2], "\n".join(lines)
        # tab again: the serve-check's rows, with the fix; the status line stays
        await pilot.press("tab")
        await wait_until(pilot, lambda: screen.focused is screen.serving.rows, what="the serve-check's rows")
        await wait_until(pilot, lambda: "fix: config.json" in screen_text(app), what="the fix")
        lines = screen_text(app).splitlines()
        assert len(_file_rows(lines)) >= 2 and "top-1 on 4 of 24" in lines[-2], "\n".join(lines)

        # the counts in words, in the findings' tail (tall enough to read it whole)
        await pilot.resize_terminal(160, 60)
        await pilot.pause()
        tail = " ".join(text for _style, text in screen.findings_list.tail)
        assert ("named from 1 file identified with the model, one per group (below); 23 other files "
                "identified only to check them against the majority's boundaries (layers_checked)") in tail, tail
        assert ('top-1 column: 4 of 24 files scored, 4 per group (its representative and 3 spread along it; '
                '1 group; a drafter pass each); "-": not scored') in tail, tail
