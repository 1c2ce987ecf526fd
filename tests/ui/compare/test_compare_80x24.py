"""Issue 57 item 8: the compare view at 80x24 as the new user ran it (--model, --drafter and the
tokenizer: the drafter's line, the identified slots in the findings, token text) keeps 8 token
rows (3 had been left), its header wraps instead of being cut ("SpecForge, 1"), and the verdict
is still on screen."""

from __future__ import annotations

import re

from eagle3_tui.sources.local import LocalSource
from eagle3_tui.ui.compare.screen import CompareScreen
from eagle3_tui.ui.start.analysis import Analysis
from tests.helpers.compare_view import SHARD, compare_done, go_to, started
from tests.helpers.tui import make_app, screen_text, wait_until


def _token_rows(lines: list[str]) -> list[str]:
    """The aligned tokens' rows on screen: a row number, then its cells up to a │."""
    return [line for line in lines if re.match(r"^ +\d+ +\d+ +\d+ ", line) and "│" in line]


async def test_80x24_with_the_drafter_keeps_8_rows_and_the_whole_header(demo_drafter):
    demo = demo_drafter
    app = make_app(demo / SHARD, LocalSource())
    app.analysis = Analysis.from_options(model=str(demo / "model"), drafter=str(demo / "drafter"))
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await go_to(pilot, demo / SHARD, "data_0.ckpt")
        await pilot.press("t")
        await go_to(pilot, demo / "infer", "ok_bf16_s0.pt")
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), what="the compare view")
        await compare_done(pilot)
        await app.workers.wait_for_complete()  # the drafter on A, on B
        await pilot.pause()
        lines = screen_text(app).splitlines()
        text = "\n".join(lines)
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        rows = _token_rows(lines)
        assert len(rows) >= 8, text
        assert rows[0].split()[:3] == ["0", "1", "1"], text  # from the first row
        # the header: the drafter's line whole, across as many lines as it needs, then the sides
        top = " ".join(" ".join(lines[:lines.index(next(ln for ln in lines if " ⇄ " in ln))]).split())
        assert top.startswith("drafter ") and "A top-1" in top and "B top-1" in top, text
        assert "SpecForge, 1 layer, 3 aux states, draft vocab 256" in top, text
        assert "A training data_0.ckpt ⇄ B inference ok_bf16_s0.pt" in text, text
        # the verdict and the first finding are on screen above the rows
        assert "✓ no warning or error" in text, text
        assert text.index("✓ no warning or error") < text.index(rows[0])
        # and the per-slot metrics below them, at least their first slots
        assert re.search(r"^ slot 0 +1\.0000", text, re.M), text
