"""The compare view on two prompts that share only their first N tokens (issue 20, item 3): the
view names them ("B is another prompt that shares the first N tokens") where it used to say
"Nothing to compare" after a TypeError."""

from __future__ import annotations

import shutil

import pytest
import torch

from eagle3_tui.ui.compare.screen import CompareScreen
from tests.helpers.compare_view import SHARD, compare_done, go_to, started
from tests.helpers.compare_world import World, late_capture, other_prompt
from tests.helpers.tui import make_app, screen_text


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """a.ckpt (prompt 0, SpecForge layout) and b_N.pt: another prompt sharing A's first N ids,
    captured with rows one token late (so that even the shared rows disagree)."""
    world = World(0)
    root = tmp_path_factory.mktemp("shared")
    a = world.train(0, pad=3)
    torch.save({"input_ids": a.ids, "loss_mask": a.loss_mask, "hidden_state": a.final.tensor[None],
                "aux_hidden_state": torch.cat([s.tensor for s in a.slots], -1)[None]}, root / "a.ckpt")
    # a training file whose every row is padding (id 0, loss_mask 0): nothing can be compared
    torch.save({"input_ids": torch.zeros_like(a.ids), "loss_mask": torch.zeros_like(a.loss_mask),
                "aux_hidden_state": torch.cat([s.tensor for s in a.slots], -1)[None]}, root / "all_padding.ckpt")
    for n in (0, 1, 2, 8):
        b = late_capture(world, other_prompt(world, n), shifted=True)
        torch.save({"input_ids": b.ids, "aux_hidden_state": torch.cat([s.tensor for s in b.slots], -1)},
                   root / f"b_{n}.pt")
    return root


async def _open(pilot, folder, a: str, b: str) -> CompareScreen:
    await go_to(pilot, folder, a)
    await pilot.press("t")
    await go_to(pilot, folder, b)
    await pilot.press("c")
    assert isinstance(pilot.app.screen, CompareScreen)
    await compare_done(pilot)
    return pilot.app.screen


def _flat(app) -> str:
    """The screen as one line of words: a finding's message wraps over several lines."""
    return " ".join(screen_text(app).split())


@pytest.mark.parametrize("shared", [0, 1, 2, 8])
async def test_the_view_names_another_prompt(pairs, shared):
    app = make_app(pairs)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        view = await _open(pilot, pairs, "a.ckpt", f"b_{shared}.pt")
        assert "error" not in view.result, view.result.get("error")
        text = _flat(app)
        assert "Nothing to compare" not in text and "TypeError" not in text
        assert "token ids diverge" in text and f"shares the first {shared} tokens" in text
        codes = [f["code"] for f in view.result["findings"] if f["severity"] == "error"]
        assert codes[0] == "token_divergence" or "token_divergence" in codes
        if shared:
            assert f"aligned tokens · {shared} rows" in screen_text(app)


async def test_the_demo_pair_from_the_issue(demo, tmp_path):
    shutil.copyfile(demo / SHARD / "data_0.ckpt", tmp_path / "data_0.ckpt")
    shutil.copyfile(demo / "infer" / "fault_shifted_s17.pt", tmp_path / "fault_shifted_s17.pt")
    app = make_app(tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        view = await _open(pilot, tmp_path, "data_0.ckpt", "fault_shifted_s17.pt")
        assert "error" not in view.result
        text = _flat(app)
        assert "Nothing to compare" not in text
        assert "B is another prompt that shares the first" in text


async def test_a_comparison_of_nothing_says_so(pairs):
    app = make_app(pairs)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        view = await _open(pilot, pairs, "all_padding.ckpt", "b_8.pt")
        assert "error" not in view.result
        text = _flat(app)
        assert "nothing compared (nothing_compared)" in text and "A holds no valid rows" in text
        assert "no warning or error" not in text
