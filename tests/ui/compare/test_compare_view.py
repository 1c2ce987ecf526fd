"""The compare view driven by keys: pin (t), choose (i), open (c), findings, worst token, swap."""

from __future__ import annotations

from eagle3_tui.ui.compare.format import worst_row
from eagle3_tui.ui.compare.screen import CompareScreen
from eagle3_tui.ui.compare.tokens import AlignedTokenTable
from tests.helpers.compare_view import SHARD, compare_done, expected, go_to, grid_row, listing_done, started
from tests.helpers.tui import make_app, screen_text, wait_until


async def open_pair(pilot, demo, train: str, capture: str, *, choose_with_i: bool = True) -> CompareScreen:
    app = pilot.app
    await go_to(pilot, demo / SHARD, train)
    await pilot.press("t")
    await go_to(pilot, demo / "infer", capture)
    if choose_with_i:
        await pilot.press("i")
    await pilot.press("c")
    assert isinstance(app.screen, CompareScreen)
    await compare_done(pilot)
    return app.screen


async def test_pin_choose_open_names_the_permutation(demo):
    """The user's path with real keys: t on data_10 (the target file), up to the demo, into infer/,
    i on the permuted capture, c: the finding the demo README promises is on top, in words."""
    row = expected(demo, "fault_permuted_s10.pt")
    assert row["train"] == f"{SHARD}/data_10.ckpt" and row["finding"] == "slot_permutation"
    app = make_app(demo / SHARD / "data_10.ckpt")
    async with app.run_test(size=(120, 40)) as pilot:
        await listing_done(pilot)
        main = app.main_screen
        assert main.browser.current.name == "data_10.ckpt"
        await pilot.press("t")
        assert main.pins.a.path == str(demo / SHARD / "data_10.ckpt")
        await wait_until(pilot, lambda: "A data_10.ckpt" in screen_text(app), what="the pins line saying what is pinned")
        await pilot.press("h")
        await listing_done(pilot)
        await pilot.press("h")
        await listing_done(pilot)
        assert main.browser.current.name == "train"
        await pilot.press("k", "k")  # train -> model/ -> infer/
        assert main.browser.current.name == "infer"
        await pilot.press("l")
        await listing_done(pilot)
        await pilot.press("slash", *"permuted", "enter", "i")
        assert main.pins.b.path == str(demo / "infer" / "fault_permuted_s10.pt")
        assert "B fault_permuted_s10.pt" in screen_text(app)
        await pilot.press("c")
        view = app.screen
        assert isinstance(view, CompareScreen)
        await compare_done(pilot)
        text = screen_text(app)
        lines = text.splitlines()
        findings = [n for n, line in enumerate(lines) if "slot_permutation" in line]
        tokens = [n for n, line in enumerate(lines) if "‖A0‖" in line]
        assert findings and tokens and findings[0] < tokens[0], "findings sit above the tokens"
        assert "slots in another order" in text and "B0=A2, B1=A0, B2=A1" in text
        # the cosine grid shows the permutation: each B row has its 1.000 under another A slot
        grid = [grid_row(lines, f"B{j}") for j in range(3)]
        assert [cells.index("1.000") for cells in grid] == [2, 0, 1]
        # one row per aligned token
        table = view.query_one(AlignedTokenTable)
        # 107: tokenizers' encode of sample 10's chat text (the Pythagoras chat) gives 107 ids
        assert table.count == view.result["alignment"]["length"] == 107


async def test_correct_pair_shows_no_warning(demo):
    """data_0 against its bf16 capture: nothing to warn about, and c alone (no i) takes the file
    under the cursor as the inference side."""
    assert expected(demo, "ok_bf16_s0.pt")["finding"] is None
    app = make_app(demo / SHARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        view = await open_pair(pilot, demo, "data_0.ckpt", "ok_bf16_s0.pt", choose_with_i=False)
        text = screen_text(app)
        assert "✓ no warning or error" in text
        assert "✗" not in text and "⚠" not in text
        assert view.result["findings"] == [] or all(f["severity"] == "info" for f in view.result["findings"])
        # the final states are compared too, and the ids of both sides are shown per token
        assert "‖Af‖" in text and "A id" in text and "B id" in text
        first_ids = view.result["rows"]["a_ids"][:3]
        row0 = next(line for line in text.splitlines() if line.lstrip().startswith("0 ") or line.startswith("◆  0"))
        assert str(first_ids[0]) in row0


async def test_worst_token_jump_lands_on_the_row_the_result_names(demo):
    app = make_app(demo / SHARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        view = await open_pair(pilot, demo, "data_9.ckpt", "fault_layers_some_s9.pt")
        r = view.result
        measured = [m for m in r["slots"] + ([r["final"]] if r["final"] else []) if m.get("worst_rel_err") is not None]
        worst = max(measured, key=lambda m: m["worst_rel_err"])
        target = worst["worst_b_row"] - r["alignment"]["b_start"]
        table = view.query_one(AlignedTokenTable)
        assert table.cursor == 0 and target != 0, "the test needs the worst row away from the start"
        await pilot.press("w")
        assert table.cursor == target == worst_row(r)[0]
        text = screen_text(app)
        assert f"worst token: B row {worst['worst_b_row']}" in text
        assert f"B row {worst['worst_b_row']}" in text.split("token under the cursor")[1]  # values follow
        # the cursor row is on screen and carries the worst marker
        marked = [line for line in text.splitlines() if line.startswith("◆")]
        assert marked and marked[0][1:].split()[0] == str(worst["worst_b_row"])
        await pilot.press("k")
        assert table.cursor == target - 1


async def test_swap_runs_the_comparison_the_other_way_round(demo):
    app = make_app(demo / SHARD)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        view = await open_pair(pilot, demo, "data_10.ckpt", "fault_permuted_s10.pt")
        train, capture = str(demo / SHARD / "data_10.ckpt"), str(demo / "infer" / "fault_permuted_s10.pt")
        assert view.result["a"]["path"] == train
        await pilot.press("s")
        await compare_done(pilot)
        assert view.result["a"]["path"] == capture and view.result["b"]["path"] == train
        perm = next(f for f in view.result["findings"] if f["code"] == "slot_permutation")
        assert perm["mapping"] == [1, 2, 0]  # the inverse of [2, 0, 1]
        text = screen_text(app)
        assert "B0=A1, B1=A2, B2=A0" in text
        assert text.index("fault_permuted_s10.pt") < text.index("data_10.ckpt")  # A is listed first
        main = app.main_screen
        assert main.pins.a.path == capture and main.pins.b.path == train  # the pins follow
        await pilot.press("escape")
        assert app.screen is main


async def test_fits_80x24_findings_tokens_and_grid(demo):
    app = make_app(demo / SHARD)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        view = await open_pair(pilot, demo, "data_10.ckpt", "fault_permuted_s10.pt")
        text = screen_text(app)
        lines = text.splitlines()
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        assert "slot_permutation" in text
        token_rows = [line for line in lines if "│" in line and line[:5].strip().isdigit()]
        assert len(token_rows) >= 8, text
        assert "1.000" in grid_row(lines, "B0"), "the grid is visible"
        # v swaps the metrics for the values of the token under the cursor on a short screen
        assert "token under the cursor" not in text
        await pilot.press("v")
        text = screen_text(app)
        assert "token under the cursor" in text and "B row 0" in text
        assert view.query_one("#cmp-metrics").display is False
