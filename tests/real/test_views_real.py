"""The sample view and the compare view on the real model's states (issue 30 item 2): massive
activations (row 0, and the padding rows, at 50..190x the median row at the middle layers) are
marked as such and no longer flatten every other token's bar; engines/read/massive.py's rule names
exactly those rows."""

from __future__ import annotations

import pytest
import torch

MASSIVE_MARK = "▲"  # ui/shared/norm_marks.py's mark
from tests.helpers.compare_view import compare_done, go_to, started
from tests.helpers.real_smollm2_only import smollm2_only_chats, smollm2_only_target  # noqa: F401 - SmolLM2 only (see there)
from tests.helpers.tui import make_app, screen_text, wait_until


def test_the_rule_names_row_0_at_the_middle_layers_and_nothing_else(real_target, real_chats):
    from eagle3_tui.engines.read.massive import massive_rows

    chat = next(c for c in real_chats if len(c.ids) >= 60)
    states, _ = real_target.boundaries(torch.tensor(chat.ids), torch.float32)
    for b in (12, 15, 20, 27):
        norms = states[b].float().norm(dim=-1).tolist()
        assert massive_rows(norms) == [0], b
    for b in (0, 1, 2):  # the embeddings and the first layers have none
        assert massive_rows(states[b].float().norm(dim=-1).tolist()) == [], b


def _strip(text: str, label: str) -> str:
    line = next(ln for ln in text.splitlines() if f" {label}  " in ln and "‥" in ln)
    return line.split(f"{label}  ", 1)[1].split("  ")[0]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_sample_view_marks_massive_rows_and_scales_the_rest(real_files, size):
    app = make_app(real_files["train"].parent)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: app.screen.listing_done and app.screen.browser.entries, what="listing")
        await wait_until(pilot, lambda: app.screen.browser.current is not None, what="cursor")
        assert app.screen.browser.current.name == "data_0.ckpt"
        await wait_until(pilot, lambda: (app.screen.sample.summary or {}).get("path", "").endswith("data_0.ckpt"),
                         timeout=90, what="the sample to load")
        text = screen_text(app)
        assert "massive activation" in text, text  # the token line at row 0
        if size == (120, 40):  # the legend; at 80x24 the range's ▲ and the token line say it
            assert "x the median" in text, text
        bars = _strip(text, "aux1")
        assert bars.startswith(MASSIVE_MARK)  # row 0
        ordinary = [c for c in bars[1:] if c != MASSIVE_MARK]
        # the other tokens use the scale: many levels, not all at the bottom
        assert len(set(ordinary)) >= 4, bars
        assert sum(c == "▁" for c in ordinary) < len(ordinary) / 2, bars
        assert "e+04" not in text  # 25,139 reads 25.1k


async def test_compare_view_names_the_massive_row(real_files):
    app = make_app(real_files["train"].parent)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await go_to(pilot, real_files["train"].parent, real_files["train"].name)
        await pilot.press("t")
        await go_to(pilot, real_files["ok"].parent, real_files["ok"].name)
        await pilot.press("c")
        await compare_done(pilot)
        text = screen_text(app)
        assert "row 0: massive activation" in text and "x the median" in text, text
        assert "e+04" not in text and "k " in text.split("row  A id", 1)[1].splitlines()[1]
