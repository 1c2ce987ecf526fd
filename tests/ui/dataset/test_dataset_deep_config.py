"""Issue 44, item 2 in the TUI: a --model or --drafter whose config.json is nested 100,000 levels
deep, or a FIFO, is one line wherever it is read; the dataset view keeps its findings (it showed
`findings_failed: RecursionError` and lost them all, or stuck at "identifying 1/24…")."""

from __future__ import annotations

import os
import shutil

import pytest

from eagle3_tui.ui.start.analysis import Analysis
from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.tui import make_app, wait_until

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("broken", ["model deep", "drafter fifo"])
async def test_the_dataset_view_keeps_its_findings_with_a_broken_config(demo_drafter, tmp_path, broken):
    model, drafter = tmp_path / "model", tmp_path / "drafter"
    shutil.copytree(demo_drafter / "model", model, copy_function=os.link)
    shutil.copytree(demo_drafter / "drafter", drafter, copy_function=os.link)
    which = model if broken.startswith("model") else drafter
    (which / "config.json").unlink()
    if broken.endswith("fifo"):
        os.mkfifo(which / "config.json")
    else:
        (which / "config.json").write_text(DEEP)
    app = make_app(demo_drafter)
    app.analysis = Analysis.from_options(model=str(model), drafter=str(drafter))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, demo_drafter / "train", on="rows_0-2000")
        await scan_done(pilot, screen)
        await wait_until(pilot, lambda: screen.layers_state not in (None, "identifying")
                         and screen.accept_state in (None, "done"), what="the steps")
        codes = [f["code"] for f in screen.findings]
        assert "findings_failed" not in codes and codes, codes
