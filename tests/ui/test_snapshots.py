"""Whole-screen text snapshots at fixed sizes, so a layout regression shows up as a diff.

Regenerate after an intended change with: EAGLE3_TUI_UPDATE_SNAPSHOTS=1 python -m pytest tests/ui
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.connect import Opened
from tests.ui.conftest import CountingSource, screen_text, wait_until

SNAPSHOTS = Path(__file__).parent / "snapshots"


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("EAGLE3_TUI_UPDATE_SNAPSHOTS") or not path.exists():
        path.write_text(text + "\n")
        if not os.environ.get("EAGLE3_TUI_UPDATE_SNAPSHOTS"):
            pytest.fail(f"wrote new snapshot {path.name}; check it and commit it")
    assert text + "\n" == path.read_text(), f"screen differs from {path}"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_padded_sample_screen(tree, monkeypatch, size):
    monkeypatch.chdir(tree)  # relative paths keep the temp folder's name off the screen
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()

    async def opener(text, **_kwargs):
        return Opened(CountingSource(), text, "local")

    app = Eagle3App("rows_0-2000/data_2.ckpt", opener=opener)
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown == "rows_0-2000/data_2.ckpt"
                         and main.sample.loading_name is None, what="data_2 summary")
        await pilot.press("right_square_bracket", "right_square_bracket")
        check_snapshot(f"padded_{size[0]}x{size[1]}.txt", screen_text(app))
