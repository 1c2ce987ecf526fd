"""--drafter in the TUI: the sample header's top-1 and τ, misses on the strips, the compare view's
line (A, B, B re-ordered), cancelling, and nothing extra without a drafter."""

from __future__ import annotations

import pytest
import torch

from eagle3_tui.engines.model.accept import accept_file
from eagle3_tui.engines.model.accept_words import why_b_differs
from eagle3_tui.ui.compare.screen import CompareScreen
from eagle3_tui.ui.shared.acceptance import CompareAcceptance
from tests.helpers.drafter import save_drafter
from tests.helpers.tui import make_drafter_app as make_app
from tests.helpers.tui import screen_text, wait_until

WIDE = (230, 50)  # the sample panel gives every token of a ~100-token sample its own column


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


async def _shown(pilot, name: str) -> None:
    main = pilot.app.main_screen
    await wait_until(pilot, lambda: main.shown is not None and main.shown.endswith(name), what=f"{name} shown")


def _done(main) -> bool:
    acc = main.sample.acceptance
    return acc is not None and not acc.get("running")


async def test_sample_header_shows_top1_and_tau_and_marks_misses(trained, data):
    path = data / "a_train.ckpt"
    expected = accept_file(str(path), str(trained.drafter))  # computed here, independently of the app
    app = make_app(path, str(trained.drafter))
    async with app.run_test(size=WIDE) as pilot:
        main = app.main_screen
        await _shown(pilot, "a_train.ckpt")
        await wait_until(pilot, lambda: _done(main), what="the drafter's result")
        text = screen_text(app)
        head = next(line for line in text.splitlines() if "drafter top-1" in line)
        assert f"top-1 {_pct(expected['top1'])}" in head and f"τ {expected['tau']:.2f}" in head
        assert f"{expected['rows']} rows" in head
        assert "SpecForge, 1 layer, 3 aux states, draft vocab 320" in text  # the drafter's shape
        assert "1 column = token " in text  # one column per token: the strip's columns are rows
        strip_line = next(line for line in text.splitlines() if line.lstrip("│ ").startswith("draft "))
        mask_line = next(line for line in text.splitlines() if line.lstrip("│ ").startswith("mask "))
        start = mask_line.index("mask ") + len("mask".ljust(5)) + 1  # the strips' first column
        cells = strip_line[start:]
        misses = [t["row"] for t in expected["per_token"] if not t["hit"]]
        hits = [t["row"] for t in expected["per_token"] if t["hit"]]
        assert misses and hits
        assert all(cells[r] == "█" for r in misses), cells
        assert all(cells[r] == "━" for r in hits), cells
        scored = {t["row"] for t in expected["per_token"]}
        assert all(cells[r] == " " for r in range(min(scored)) if r not in scored)  # the prompt: not scored
        # the token line names the drafter's guess at the cursor
        first_miss = misses[0]
        main.sample.set_token(first_miss)
        await pilot.pause()
        assert f"drafter guesses token {first_miss + 2}:" in screen_text(app) and " miss" in screen_text(app)
        # cached per file: back on it, no second run
        runs = len(app.test_source.accepted)
        main.schedule_load(str(path), delay=0)
        await wait_until(pilot, lambda: _done(main) and main.shown == str(path), what="reload")
        assert len(app.test_source.accepted) == runs


async def test_no_drafter_shows_nothing_extra(data):
    app = make_app(data / "a_train.ckpt", None)
    async with app.run_test(size=WIDE) as pilot:
        await _shown(pilot, "a_train.ckpt")
        await app.workers.wait_for_complete()  # whatever the sample started has ended: nothing more comes
        await pilot.pause()
        text = screen_text(app)
        assert "drafter" not in text and "draft " not in text
        assert app.main_screen.sample.acceptance is None and app.test_source.accepted == []


@pytest.mark.parametrize("bad", ["a folder of samples", "fc_norm weights without the key"])
async def test_bad_drafter_folder_is_one_line(trained, data, tmp_path, bad):
    folder, says = str(data), "config.json"  # a folder of samples, not a drafter
    if bad != "a folder of samples":  # weights the forward would not apply: never scored in silence
        fc_norm = {f"fc_norm.{i}.weight": torch.full((64,), 1.5) for i in range(3)}
        folder, says = save_drafter(str(tmp_path / "d"), {**trained.weights, **fc_norm}), "fc_norm.0.weight"
    app = make_app(data / "a_train.ckpt", folder)
    async with app.run_test(size=WIDE) as pilot:
        main = app.main_screen
        await _shown(pilot, "a_train.ckpt")
        await wait_until(pilot, lambda: _done(main), what="the drafter's error")
        # checked once at start: said once (the toast names what is wrong), the sample's line says it is off
        lines = [line for line in screen_text(app).splitlines() if "drafter ✗" in line]
        assert len(lines) == 1 and "off: bad --drafter" in lines[0]
        toasts = [n.message for n in app._notifications]
        assert len(toasts) == 1 and says in toasts[0] and "--drafter unusable" in toasts[0]
        assert app.test_source.accepted == []  # no sample was run with it
        assert not [line for line in screen_text(app).splitlines() if line.lstrip("│ ").startswith("draft ")]
        await pilot.press("down")  # the app keeps running
        assert "aux0" in screen_text(app)


async def test_moving_on_cancels_the_run(trained, data):
    app = make_app(data / "c_long.ckpt", str(trained.drafter))
    async with app.run_test(size=WIDE) as pilot:
        main = app.main_screen
        source = app.test_source
        await _shown(pilot, "c_long.ckpt")
        await wait_until(pilot, lambda: source.accepted, what="the drafter run to start")
        assert (main.sample.acceptance or {}).get("running")
        assert "drafter ⟳ running" in screen_text(app)
        await pilot.press("up")  # onto b_permuted.pt
        await _shown(pilot, "b_permuted.pt")
        await wait_until(pilot, lambda: source.cancelled, what="the cancel")
        assert source.cancelled == [str(data / "c_long.ckpt")]
        await wait_until(pilot, lambda: _done(main), what="b's result")
        b = accept_file(str(data / "b_permuted.pt"), str(trained.drafter))
        assert f"top-1 {_pct(b['top1'])}" in screen_text(app)


async def test_compare_line_shows_a_b_and_b_reordered(trained, data):
    a = accept_file(str(data / "a_train.ckpt"), str(trained.drafter))
    b = accept_file(str(data / "b_permuted.pt"), str(trained.drafter))
    assert b["top1"] < 0.5 * a["top1"]
    app = make_app(data / "a_train.ckpt", str(trained.drafter))
    async with app.run_test(size=(140, 40)) as pilot:
        main = app.main_screen
        await _shown(pilot, "a_train.ckpt")
        await pilot.press("t")
        await pilot.press("down")
        await pilot.press("i")
        await pilot.press("c")
        assert isinstance(app.screen, CompareScreen)
        line = app.screen.query_one(CompareAcceptance)
        await wait_until(pilot, lambda: all(r and not r.get("running") for r in (line.a, line.b, line.fixed)),
                         what="A, B and B re-ordered")
        assert line.order == [1, 2, 0]
        first = screen_text(app).splitlines()[0]
        assert f"A top-1 {_pct(a['top1'])} · τ {a['tau']:.2f}" in first
        assert f"B top-1 {_pct(b['top1'])} · τ {b['tau']:.2f}" in first
        # the same states in A's order: exactly A's acceptance back
        assert f"B re-ordered 1,2,0 top-1 {_pct(a['top1'])} · τ {a['tau']:.2f}" in first
        assert line.fixed["top1"] == a["top1"] and line.fixed["tau"] == a["tau"]
        shown = line.render().plain.splitlines()
        assert shown[0].endswith("│  SpecForge, 1 layer, 3 aux states, draft vocab 320")
        assert "vs data's ids" in shown[0]  # no --model: every figure is scored against the data's ids
        # the states are A's (re-ordered they score exactly A's figure): what B's own figure differs by is said
        assert why_b_differs(a, b) == [] and len(shown) == 1  # scored alike: the states make the difference
        del main


async def test_compare_line_says_why_b_is_not_a_when_the_states_match(trained, data):
    """The same states as a capture holds them (no loss mask) score another figure: the line says
    it is other rows, not other states, and fits an 80-column terminal by wrapping."""
    a = accept_file(str(data / "a_train.ckpt"), str(trained.drafter))
    b = accept_file(str(data / "d_capture.pt"), str(trained.drafter))
    assert a["top1"] != b["top1"]
    app = make_app(data / "a_train.ckpt", str(trained.drafter))
    async with app.run_test(size=(80, 24)) as pilot:
        await _shown(pilot, "a_train.ckpt")
        for key in ("t", "down", "down", "down", "i", "c"):
            await pilot.press(key)
        assert isinstance(app.screen, CompareScreen)
        line = app.screen.query_one(CompareAcceptance)
        await wait_until(pilot, lambda: all(r and not r.get("running") for r in (line.a, line.b)), what="A and B")
        await pilot.pause()
        text = " ".join(" ".join(screen_text(app).split("\n")[:4]).split())
        assert f"A top-1 {_pct(a['top1'])}" in text and f"B top-1 {_pct(b['top1'])}" in text
        assert f"B is scored otherwise: other rows: A loss mask ({a['rows']}), B all rows ({b['rows']})" in text


async def test_compare_without_drafter_has_no_line(data):
    app = make_app(data / "a_train.ckpt", None)
    async with app.run_test(size=(140, 40)) as pilot:
        await _shown(pilot, "a_train.ckpt")
        for key in ("t", "down", "i", "c"):
            await pilot.press(key)
        assert isinstance(app.screen, CompareScreen)
        assert not app.screen.query(CompareAcceptance)
        assert "drafter" not in screen_text(app)
