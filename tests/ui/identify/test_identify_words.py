"""Rough edge 4 of issue 24: `I` says what the CLI's identify says on the same file: each slot's
boundary in words ("output of layer i") with its cosine, and the warnings (the demo's
train_ids_0_2_3 sample follows no reading of the layer ids: `layer_convention`), at 120x40 and
80x24; the drafter's line stays on the sample after I."""

from __future__ import annotations

import pytest

from eagle3_tui.engines.model.identify import identify_file
from tests.helpers.tui import text_app, wait_until

SAMPLE = "train_ids_0_2_3/rows_0-2000/data_20.ckpt"


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_I_shows_layers_in_words_cosines_and_the_cli_warning(demo_drafter, tmp_path, size):
    demo = demo_drafter
    path = demo / SAMPLE
    cli = identify_file(str(path), str(demo / "model"))  # what `eagle3-tui identify` prints from
    warning = next(f for f in cli["findings"] if f["code"] == "layer_convention")
    app = text_app(path, None, tmp_path, model=str(demo / "model"), drafter=str(demo / "drafter"))
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown == str(path) and main.sample.summary is not None,
                         what="the sample")
        await wait_until(pilot, lambda: (main.sample.acceptance or {}).get("top1") is not None, what="the drafter's line")
        await pilot.press("I")
        await app.workers.wait_for_complete([w for w in app.workers if w.group == "identify"])
        await wait_until(pilot, lambda: main.identifying is None, what="the identification")
        await pilot.pause()
        panel = " ".join(main.sample.render().plain.split())  # the panel's lines, wraps joined
    for row in cli["slots"]:
        b = row["boundary"]
        assert f"{row['label']} b {b} · output of layer {b - 1} · cosine {row['cosine']:.4f}" in panel, panel
    assert f"final after the final norm · cosine {cli['final']['cosine']:.4f}" in panel, panel
    assert f"⚠ layer_convention: {' '.join(warning['message'].split())}" in panel, panel
    assert "drafter top-1" in panel  # I re-draws the sample, the drafter's result stays
