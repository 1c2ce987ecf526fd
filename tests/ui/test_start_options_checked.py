"""--model, --drafter and --tokenizer that are not what they claim are checked once at start
(issue 24, rough edge 3): one message says what is wrong with each, and the sample's drafter
line says it is off instead of repeating the loader's cut-off error on every sample."""

from __future__ import annotations

import pytest

from eagle3_tui.target import parse_target
from eagle3_tui.ui.start.analysis import Analysis
from eagle3_tui.ui.start.analysis_check import check
from tests.helpers.tui import screen_text, text_app, wait_until

SHARD = "train/rows_0-2000"


def test_real_folders_pass_and_swapped_ones_do_not(demo, trained):
    data = parse_target(str(demo / SHARD))
    good = Analysis.from_options(str(demo / "model"), model=str(trained.model), drafter=str(trained.drafter))
    assert check(good, data, True) == {}
    swapped = Analysis.from_options(str(demo / "README.txt"), model=str(trained.drafter), drafter=str(trained.model))
    problems = check(swapped, data, True)
    assert "a drafter's weights" in problems["model"]
    assert "lacks num_attention_heads" in problems["drafter"]
    assert "not a tokenizer.json" in problems["tokenizer"]
    a_model = Analysis.from_options(None, drafter=str(demo / "model"))
    assert "no fc.weight" in check(a_model, data, True)["drafter"]
    missing = Analysis.from_options(str(demo / "nothing"), model=str(demo / "infer"), drafter=str(demo / "nothing"))
    problems = check(missing, data, True)
    assert "no config.json" in problems["model"] and "no such folder" in problems["drafter"]
    assert "no such tokenizer file" in problems["tokenizer"]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_bad_options_are_said_once_and_samples_do_not_repeat_them(demo, trained, tmp_path, size):
    app = text_app(demo / SHARD, demo / "README.txt", tmp_path, model=str(demo / "infer"),
                   drafter=str(trained.drafter))
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.pane.unusable, what="the options checked")
        assert set(main.pane.unusable) == {"model", "tokenizer"}
        notes = [n.message for n in app._notifications]
        assert len(notes) == 1 and "--model unusable" in notes[0] and "no config.json" in notes[0]
        assert "--tokenizer unusable" in notes[0]
        await wait_until(pilot, lambda: main.shown is not None, what="the first sample")
        await pilot.pause()
        text = screen_text(app)
        assert "drafter ✗ off: bad --model" in text
        assert "no model.safetensors" not in text and "Hugging" not in text.split("Start-up")[0]
        await pilot.press("j")
        await wait_until(pilot, lambda: main.shown is not None and main.shown.endswith("data_1.ckpt"), what="data_1")
        assert len(app._notifications) == 1  # said once, not per sample
        await pilot.press("I")
        assert "I needs a target model" in screen_text(app)


async def test_a_model_on_the_ssh_box_is_checked_there_at_start(box, demo, trained, tmp_path):
    """Data on a box: --model and --drafter name folders on that box (the CLI's rule), so the
    agent checks them there; a wrong --model is said once, not on every sample."""
    from tests.ui.test_remote import remote_app

    analysis = Analysis.from_options(None, model=str(demo / "infer"), drafter=str(trained.drafter))
    app, _ = remote_app(box, tmp_path, f"box:{demo / SHARD}", analysis=analysis)
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.pane.unusable, what="the options checked on the box")
        assert set(main.pane.unusable) == {"model"} and "no config.json" in main.pane.unusable["model"]
        notes = [n.message for n in app._notifications]
        assert len(notes) == 1 and "--model unusable" in notes[0]
