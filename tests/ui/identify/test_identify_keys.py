"""I on a sample, and the compare view with --model: identified boundaries on screen."""

from __future__ import annotations

import pytest

from tests.helpers.compare_view import compare_done
from tests.helpers.tui import make_model_app as make_app
from tests.helpers.tui import screen_text, wait_until

pytestmark = pytest.mark.asyncio

SIZE = (120, 40)


async def _shown(pilot, path) -> None:
    main = pilot.app.main_screen
    await wait_until(pilot, lambda: main.shown == str(path) and main.sample.summary is not None,
                     what="the sample on screen")


async def _identified(pilot) -> None:
    main = pilot.app.main_screen
    workers = [w for w in pilot.app.workers if w.group == "identify"]
    await pilot.app.workers.wait_for_complete(workers)
    await wait_until(pilot, lambda: main.identifying is None, what="the identification")


def _b_column(text: str) -> dict[str, str]:
    """slot label -> its b cell, from the rows under the sample panel's table header on screen."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if "‖x‖ mean" in line)
    cells = {}
    for line in lines[head + 1:]:
        words = line.split("│")[-2].split() if line.count("│") >= 2 else line.split()
        if not words or words[0] not in ("aux0", "aux1", "aux2", "final"):
            break
        cells[words[0]] = words[1]
    return cells


async def test_I_fills_the_b_column_with_identified_boundaries(world):
    path = world.root / "data" / "a_train.ckpt"
    app = make_app(path, str(world.model))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(pilot, path)
        before = _b_column(screen_text(app))
        # SpecForge's layout names no layers; its word "post-norm" for the final is checked against the
        # file's norms, and on this random-weight model the norm's output (median row norm ~8) is many
        # times the residual slots', as no real model's is (engines/read/final_label.py): "?" until I
        assert before == {"aux0": "?", "aux1": "?", "aux2": "?", "final": "?"}, before
        await pilot.press("I")
        await _identified(pilot)
        await pilot.pause()
        text = screen_text(app)
        assert _b_column(text) == {"aux0": "2*", "aux1": "4*", "aux2": "5*", "final": "post*"}, text
        assert "identified against the model (L = 8, 40 tokens)" in text
        assert "slots at b 2, 4, 5" in text  # the status line
        # cached per file: back on it after another file, the b column is filled without a run
        await pilot.press("n")
        await _shown(pilot, world.root / "data" / "b_infer.ckpt")
        await pilot.press("p")
        await _shown(pilot, path)
        await pilot.pause()
        assert not [w for w in app.workers if w.group == "identify" and w.is_running]
        assert _b_column(screen_text(app))["aux0"] == "2*"


async def test_I_without_a_model_says_how_to_give_one(world):
    path = world.root / "data" / "a_train.ckpt"
    app = make_app(path, None)
    async with app.run_test(size=SIZE) as pilot:
        await _shown(pilot, path)
        await pilot.press("I")
        await pilot.pause()
        text = screen_text(app)
        assert "no target model: start eagle3-tui with --model DIR (on the data's machine)" in text
        assert _b_column(text)["aux0"] == "?"


async def test_I_with_a_folder_that_is_not_a_model_says_so_and_keeps_running(world, tmp_path):
    path = world.root / "data" / "a_train.ckpt"
    app = make_app(path, str(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(pilot, path)
        await wait_until(pilot, lambda: app.main_screen.pane.unusable, what="the start-up check")
        await pilot.press("I")  # --model was found unusable at start: I says so and runs nothing
        await pilot.pause()
        text = screen_text(app)
        assert "I needs a target model: model" in text and app.main_screen.identifying is None
        toasts = [n.message for n in app._notifications]  # the start-up toast wraps the whole reason
        assert any("not a Hugging Face model folder (no config.json)" in t for t in toasts), toasts
        assert _b_column(text)["aux0"] == "?"


async def test_compare_view_with_model_names_the_exact_boundaries(world):
    data = world.root / "data"
    app = make_app(data / "a_train.ckpt", str(world.model))
    async with app.run_test(size=SIZE) as pilot:
        await _shown(pilot, data / "a_train.ckpt")
        await pilot.press("t", "n")
        await _shown(pilot, data / "b_infer.ckpt")
        await pilot.press("i", "c")
        await compare_done(pilot)
        result = app.screen.result
        assert result["identified"]["a"]["slots"][0]["boundary"] == 2
        mismatch = next(f for f in result["findings"] if f["code"] == "slot_mismatch")
        assert "B slot 0 is b = 3, A slot 0 is b = 2: every B slot one boundary deeper" in mismatch["message"]
        text = " ".join(screen_text(app).split())
        assert "B slot 0 is b = 3, A slot 0 is b = 2" in text, screen_text(app)
        assert "A slots b {2, 4, 5}" in text or "slots_identified" in text or "identified against" in text
