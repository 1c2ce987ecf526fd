"""Each finding branch with a positive case and a near miss that must not take it: final-state
slot and scale mismatches, ids that never line up, re-alignment after a replaced, missing or
inserted token, the LayerNorm fit, and a longer capture without ids."""

from __future__ import annotations

import pytest
import torch

from eagle3_tui.engines.compare import compare
from eagle3_tui.engines.read.sample import Sample, Slot

from tests.helpers.compare_world import codes, finding


# ---------------------------------------------------------------- final state from another layer

def test_final_state_from_another_layer_is_a_slot_mismatch(world):
    a = world.train(0)
    b = world.capture(0, final="post", final_norm="post")
    states, _ = world.run(world.prompts[0].ids, torch.bfloat16)
    # the final norm applied to the output of layer L-2 instead of L: post-norm, but not A's state
    b.final.tensor = world.model.final_norm(states[-3].float()).bfloat16()
    r = compare(a, b)
    f = finding(r, "slot_mismatch")
    assert codes(r) == {"slot_mismatch"} and f["slots"][0]["slot"] == "final"
    assert 0.35 <= r["final"]["cos_mean"] < 0.99 and "different layers" in f["message"]


def test_final_state_from_the_right_layer_is_silent(world):
    r = compare(world.train(0), world.capture(0, final="post", final_norm="post"))
    assert codes(r) == set() and r["final"]["cos_mean"] > 0.999


# ---------------------------------------------------------------- scale on the final state

def test_scale_on_the_final_state_only_is_named_for_the_final_state(world):
    b = world.capture(0, final="post", final_norm="post")
    b.final.tensor = (b.final.tensor.float() * 1.05).bfloat16()
    r = compare(world.train(0), b)
    f = finding(r, "scale_mismatch")
    assert codes(r) == {"scale_mismatch"} and f["slots"] == ["final"]
    assert f["factor"] == pytest.approx(1.05, abs=0.002)


def test_final_state_within_the_scale_tolerance_is_silent(world):
    b = world.capture(0, final="post", final_norm="post")
    b.final.tensor = (b.final.tensor.float() * 1.015).bfloat16()
    assert codes(compare(world.train(0), b)) == set()


# ---------------------------------------------------------------- token ids that never line up

def test_ids_that_line_up_at_no_offset_are_named(world):
    b = world.capture(0)
    b.ids = torch.randint(1000, 2000, (b.tokens,), generator=torch.Generator().manual_seed(9))
    r = compare(world.train(0), b)
    f = finding(r, "token_divergence")
    assert f["severity"] == "error" and "do not line up at any offset" in f["message"]


def test_ids_that_start_later_are_aligned_silently(world):
    r = compare(world.train(0), world.capture(0, rows=slice(3, None)))
    assert codes(r) == set()
    assert (r["alignment"]["method"], r["alignment"]["offset"]) == ("ids", 3)


# ---------------------------------------------------------------- re-alignment after a divergence

@pytest.mark.parametrize(
    "edit, offset, words",
    [
        (lambda ids: ids[:5] + [7] + ids[6:], 0, "a token was replaced"),
        (lambda ids: ids[:5] + ids[6:], 1, "1 token(s) missing in B"),
        (lambda ids: ids[:5] + ids[8:], 3, "3 token(s) missing in B"),
        (lambda ids: ids[:5] + [3, 4] + ids[5:], -2, "2 token(s) inserted in B"),
    ],
    ids=["replaced", "one-missing", "three-missing", "two-inserted"],
)
def test_realignment_after_a_template_edit(world, edit, offset, words):
    seq = edit(list(world.prompts[0].ids))
    r = compare(world.train(0), world.capture(ids=seq))
    f = finding(r, "token_divergence")
    assert codes(r) == {"token_divergence"} and f["position"] == 5 and not f["in_response"]
    assert f["realign_offset"] == offset and words in f["message"]


def test_a_different_prompt_after_a_shared_start_never_realigns(world):
    ids = list(world.prompts[0].ids)
    seq = ids[:5] + [(t + 17) % 997 + 1 for t in ids[5:]]
    r = compare(world.train(0), world.capture(ids=seq))
    f = finding(r, "token_divergence")
    assert f["position"] == 5 and f["realign_offset"] is None and "never line up again" in f["message"]


# ---------------------------------------------------------------- LayerNorm vs RMSNorm fit

def _after_a_norm(world, layer_norm: bool):
    b = world.capture(0)
    x = b.slots[1].tensor.float()
    g = torch.Generator().manual_seed(6)
    gain = 1 + 0.3 * torch.randn(x.shape[1], generator=g)
    if layer_norm:
        bias = 0.2 * torch.randn(x.shape[1], generator=g)
        y = torch.nn.functional.layer_norm(x, (x.shape[1],), gain, bias)
    else:
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * gain
    b.slots[1].tensor = y.bfloat16()
    return b


def test_a_slot_after_a_layer_norm_is_named_as_layer_norm(world):
    r = compare(world.train(0), _after_a_norm(world, layer_norm=True))
    f = finding(r, "norm_mismatch")
    assert codes(r) == {"norm_mismatch"} and f["slot"] == 1 and f["after_norm"] == "b"
    assert f["norm_kind"] == "LayerNorm" and "LayerNorm" in f["message"]


def test_a_slot_after_an_rms_norm_is_not_called_a_layer_norm(world):
    f = finding(compare(world.train(0), _after_a_norm(world, layer_norm=False)), "norm_mismatch")
    assert f["norm_kind"] == "RMSNorm" and f["slot"] == 1


# ---------------------------------------------------------------- a longer capture without ids

def test_a_longer_capture_without_ids_compares_only_the_shared_rows(world):
    p = world.prompts[0]
    a = world.train(0, pad=6)  # 6 padding rows after the real tokens
    b = world.capture(ids=p.ids + [41, 42, 43, 44, 45, 46], with_ids=False)  # the engine went on
    r = compare(a, b)
    f = finding(r, "padding")
    assert f["severity"] == "info" and f["taken_as_real"] is False and f["rows"] == 6
    assert codes(r) == set() and r["alignment"]["method"] == "hidden"
    assert r["slots"][0]["tokens"] == len(p.ids)
