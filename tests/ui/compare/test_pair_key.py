"""P on a capture pins the training sample that holds its prompt as A and opens the compare view
(at 120x40 and 80x24); with --drafter, a capture without token ids gets its acceptance from A's
ids, so "B re-ordered" scores the permuted capture (rough edge 5 of issue 24)."""

from __future__ import annotations

import pytest

from eagle3_tui.ui.compare.screen import CompareScreen
from eagle3_tui.ui.shared.acceptance import CompareAcceptance
from tests.helpers.compare_view import SHARD, compare_done, expected, go_to, started
from tests.helpers.tui import make_app, make_drafter_app, screen_text, wait_until


async def pair_with_p(pilot, demo, capture: str) -> CompareScreen:
    app = pilot.app
    await started(pilot)
    await go_to(pilot, demo / "infer", capture)
    await pilot.press("P")
    await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), what="the compare view")
    await compare_done(pilot)
    return app.screen


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@pytest.mark.parametrize("capture", ["fault_permuted_s10.pt", "fault_template_drift_s16.pt"])
async def test_p_pins_the_training_sample_and_compares(demo, size, capture):
    row = expected(demo, capture)
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        view = await pair_with_p(pilot, demo, capture)
        main = app.main_screen
        assert main.pins.a.path == str(demo / row["train"])
        assert main.pins.b.path == str(demo / "infer" / capture)
        assert (view.a, view.b) == (str(demo / row["train"]), str(demo / "infer" / capture))
        assert row["finding"] in screen_text(app)  # the comparison's finding, as the README promises
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is main, what="back in the browser")
        text = screen_text(app)
        assert f"paired with {row['train'].split('/', 1)[1]}" in text or "paired with" in text
        assert f"A {row['train'].rsplit('/', 1)[1]}" in text  # the pins line


async def test_p_on_a_training_sample_keeps_it_as_a(demo, tmp_path):
    """P pressed on the training sample rather than its capture: the sample (loss mask on) stays A,
    the capture (no loss mask) that holds its prompt is B, and the status line says so."""
    import shutil

    (tmp_path / "train").mkdir()
    shutil.copytree(demo / SHARD, tmp_path / SHARD)
    (tmp_path / "infer").mkdir()
    shutil.copy(demo / "infer" / "ok_bf16_s0.pt", tmp_path / "infer")
    sample = tmp_path / expected(demo, "ok_bf16_s0.pt")["train"]
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await go_to(pilot, sample.parent, sample.name)
        await pilot.press("P")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen), what="the compare view")
        await compare_done(pilot)
        main = app.main_screen
        assert (main.pins.a.path, main.pins.b.path) == (str(sample), str(tmp_path / "infer" / "ok_bf16_s0.pt"))
        assert "B matches A" in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is main, what="back in the browser")
        assert f"training sample {sample.name} paired with capture infer/ok_bf16_s0.pt" in screen_text(app)


async def test_p_on_a_training_sample_without_a_capture_pins_nothing(demo, tmp_path):
    """data_2's prompt is in no capture here; ok_bf16_s0.pt shares its system prompt but pairs with
    data_0: P says so and pins nothing (it pinned that capture before)."""
    import shutil

    shutil.copytree(demo / SHARD, tmp_path / SHARD)
    (tmp_path / "infer").mkdir()
    shutil.copy(demo / "infer" / "ok_bf16_s0.pt", tmp_path / "infer")
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await go_to(pilot, tmp_path / SHARD, "data_2.ckpt")
        await pilot.press("P")
        await wait_until(pilot, lambda: "a training sample (loss on 59 rows) that no capture under" in screen_text(app),
                         what="P's answer")
        await app.workers.wait_for_complete()
        await pilot.pause()
        main = app.main_screen
        assert app.screen is main and main.pins.a is None and main.pins.b is None


async def test_p_says_why_when_nothing_holds_the_prompt(demo, tmp_path):
    import shutil

    (tmp_path / "infer").mkdir()
    shutil.copy(demo / "infer" / "ok_bf16_s0.pt", tmp_path / "infer")
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await go_to(pilot, tmp_path / "infer", "ok_bf16_s0.pt")
        await pilot.press("P")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is app.main_screen and app.main_screen.pins.a is None
        assert "holds its prompt" in screen_text(app)


async def test_an_id_less_capture_gets_acceptance_from_a(demo_drafter):
    """fault_permuted_s10.pt has no token ids (README.txt: a list of k tensors): B and B re-ordered
    are scored with A's ids, and re-ordering gives A's acceptance back."""
    demo = demo_drafter
    assert "list of k tensors" in (demo / "README.txt").read_text().split("fault_permuted_s10.pt |")[1].splitlines()[0]
    app = make_drafter_app(demo / SHARD / "data_10.ckpt", str(demo / "drafter"))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await pilot.press("t")
        await go_to(pilot, demo / "infer", "fault_permuted_s10.pt")
        await pilot.press("i", "c")
        assert isinstance(app.screen, CompareScreen)
        line = app.screen.query_one(CompareAcceptance)
        await wait_until(pilot, lambda: all(r and not r.get("running") for r in (line.a, line.b, line.fixed)),
                         what="A, B and B re-ordered")
        assert line.order == [1, 2, 0]
        assert "error" not in line.b and "error" not in line.fixed, (line.b, line.fixed)
        assert line.fixed["top1"] > 2 * line.b["top1"]  # the slots in A's order: the drafter works again
        assert abs(line.fixed["top1"] - line.a["top1"]) < 0.05  # bf16 capture, near A's own figure
        first = screen_text(app).splitlines()[0]
        assert "B re-ordered 1,2,0 top-1" in first and "no token ids" not in first


async def test_p_shows_its_scan_and_esc_cancels_it(demo, tmp_path):
    """The first P on a big dataset scans it: the status line counts the files, and esc stops the
    scan there (no compare view opens later, the browser keeps working)."""
    import os
    import shutil

    shard = tmp_path / "train" / "rows_0-4000"
    shard.mkdir(parents=True)
    for i in range(4000):  # hard links: 4,000 files to scan, one sample's bytes on disk
        os.link(demo / SHARD / "data_0.ckpt", shard / f"data_{i}.ckpt")
    (tmp_path / "infer").mkdir()
    shutil.copy(demo / "infer" / "ok_bf16_s0.pt", tmp_path / "infer")
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await go_to(pilot, tmp_path / "infer", "ok_bf16_s0.pt")
        main = app.main_screen
        await pilot.press("P")
        await wait_until(pilot, lambda: "files scanned" in screen_text(app), what="the scan's progress")
        assert "esc cancels" in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not [w for w in app.workers if w.group == "pair" and w.is_running],
                         what="the pairing worker stopped")
        assert "pairing cancelled" in screen_text(app)
        await app.workers.wait_for_complete()  # nothing left running could still pin or open the view
        await pilot.pause()
        assert app.screen is main and main.pins.a is None
        await pilot.press("j")  # still browsing
        assert app.screen is main
