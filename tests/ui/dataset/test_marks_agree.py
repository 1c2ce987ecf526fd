"""Rough edge 8 of issue 24: one mark per file. `D` on the demo's infer/ and the browser's marks
on the same folder follow one rule (dataset/marks.py): fault_aux_disabled_s11 (1 slot where the
others have 3) is ✗ in both, and fault_scale_s13 (every slot 4x the others' norms) gets a
`norm_scale` finding and a warning mark, at 120x40 and 80x24."""

from __future__ import annotations

import pytest

from eagle3_tui.ui.browser.browser import SCAN_GLYPH
from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.tui import make_app, screen_text, wait_until


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_browser_and_dataset_view_give_each_file_one_mark(demo, size):
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        screen = await open_dataset(pilot, demo, on="infer")
        await scan_done(pilot, screen)
        in_view = {r.get("path"): r.get("status") for r in screen.rows.records}
        assert in_view["fault_aux_disabled_s11.pt"] == "error"
        assert in_view["fault_scale_s13.pt"] == "warning"
        scale = [f for f in screen.findings if f["code"] == "norm_scale"]
        assert scale and scale[0]["paths"] == ["fault_scale_s13.pt"], screen.findings
        # written as 4x its capture; the factor is against the other files' median typical norm
        # (norm_bulk, without the massive-activation rows: 3.8x on the demo's seed 0)
        assert 3.5 < scale[0]["factors"][0] < 4.5 and f"({scale[0]['factors'][0]:.1f}x)" in scale[0]["message"]
        screen.findings_list.focus()
        for _ in range(len(screen.findings)):  # the findings list scrolls to it (80x24: a few lines)
            if "norm_scale" in screen_text(app):
                break
            await pilot.press("down")
        assert "norm_scale" in screen_text(app)
        assert in_view["ok_bf16_s0.pt"] == "ok"  # a correct capture stays ✓

        await pilot.press("escape")
        main = app.main_screen
        await wait_until(pilot, lambda: app.screen is main, what="back to the browser")
        main.open_folder(str(demo / "infer"), select="fault_aux_disabled_s11.pt")
        await wait_until(pilot, lambda: main.listing_done and len(main.browser.scan_marks) == len(in_view), what="the browser's marks")
        assert main.browser.scan_marks == in_view  # every file: the same mark in both
        line = next(x for x in screen_text(app).splitlines() if "fault_aux_disabled_s11.pt" in x)
        assert SCAN_GLYPH["error"] in line, line
