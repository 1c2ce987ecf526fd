"""One test per finding code, on real states of the demo transformer with the fault injected,
and correctly wired pairs that must stay silent."""

from __future__ import annotations

import threading

import pytest
import torch

from eagle3_tui.engines.compare import MATCH_COS, compare
from eagle3_tui.engines.read.sample import Sample, Slot
from eagle3_tui.engines.read.stats import Cancelled

from tests.helpers.compare_world import AUX, codes, finding


# --------------------------------------------------------------------------- silent pairs


def test_bf16_capture_of_the_same_prompt_is_silent(world):
    r = compare(world.train(0), world.capture(0, final="post", final_norm="post"))
    assert r["findings"] == []
    assert r["alignment"]["method"] == "ids" and r["alignment"]["offset"] == 0
    assert r["alignment"]["length"] == len(world.prompts[0].ids)
    for j, m in enumerate(r["slots"]):
        assert m["cos_mean"] > 0.999 and m["cos_min"] > 0.99
        assert abs(m["norm_ratio_median"] - 1) < 0.01 and m["rel_l2_err"] < 0.05
        assert 0 < m["within_bf16_tol"] < 1 and m["max_abs_err"] > 0
    assert r["final"]["cos_mean"] > 0.999
    # the cross-slot matrix: each B slot is closest to its own A slot, and only there above MATCH
    for j, row in enumerate(r["matrix"]):
        assert max(range(3), key=row.__getitem__) == j
        assert sum(v >= MATCH_COS for v in row) == 1


def test_prefix_capture_with_decoded_tokens_is_silent(world):
    p = world.prompts[1]
    seq = p.prompt_ids + [21, 22, 23]  # the engine decoded other tokens than the dataset's answer
    r = compare(world.train(1), world.capture(ids=seq))
    assert codes(r) == set()
    note = finding(r, "token_divergence")
    assert note["severity"] == "info" and note["position"] == len(p.prompt_ids) and note["in_response"]
    assert r["alignment"]["length"] == len(p.prompt_ids)


def test_capture_without_ids_is_aligned_by_hidden_states_and_silent(world):
    r_ids = compare(world.train(0), world.capture(0))
    r_no = compare(world.train(0), world.capture(0, with_ids=False))
    assert r_no["findings"] == [] and r_ids["findings"] == []
    assert r_no["alignment"]["method"] == "hidden" and r_no["alignment"]["offset"] == 0
    for m_ids, m_no in zip(r_ids["slots"], r_no["slots"]):
        assert m_no["cos_mean"] == pytest.approx(m_ids["cos_mean"], abs=1e-6)


def test_capture_starting_later_without_ids_finds_its_offset_and_says_so(world):
    # issue 9: B's row 0 is not the prompt's first token, and nothing in B says so
    r = compare(world.train(0), world.capture(0, with_ids=False, rows=slice(3, 60)))
    assert (r["alignment"]["method"], r["alignment"]["offset"]) == ("hidden", 3)
    f = finding(r, "token_shift")
    assert codes(r) == {"token_shift"} and f["severity"] == "warning" and f["offset"] == 3
    assert "should carry its token ids" in f["message"]
    assert all(m["cos_mean"] > 0.999 for m in r["slots"])  # still compared at the right lag


def test_padding_excluded_when_the_capture_stops_at_the_real_tokens(world):
    a = world.train(0, pad=20)
    assert a.valid_len == len(world.prompts[0].ids)
    r = compare(a, world.capture(0))
    assert r["findings"] == [] and r["alignment"]["length"] == a.valid_len


# --------------------------------------------------------------------------- one per code


def test_slot_mismatch_every_slot_one_layer_late(world):
    r = compare(world.train(0), world.capture(0, boundaries=[b + 1 for b in AUX]))
    f = finding(r, "slot_mismatch")
    assert f["severity"] == "error" and codes(r) == {"slot_mismatch"}
    assert [s["slot"] for s in f["slots"]] == [0, 1, 2]
    assert all(0.35 < s["cosine"] < MATCH_COS for s in f["slots"])
    assert f["slots"][0]["nearest"] == 0


def test_slot_mismatch_only_the_slot_that_is_off(world):
    r = compare(world.train(0), world.capture(0, boundaries=[2, 5, 8]))
    f = finding(r, "slot_mismatch")
    assert codes(r) == {"slot_mismatch"}
    assert [s["slot"] for s in f["slots"]] == [2] and f["slots"][0]["nearest"] == 2
    assert "1 of 3" in f["message"]


def test_slot_permutation_names_the_mapping(world):
    r = compare(world.train(0), world.capture(0, boundaries=[7, 2, 5]))
    f = finding(r, "slot_permutation")
    assert codes(r) == {"slot_permutation"}
    assert f["mapping"] == [2, 0, 1] and "B0=A2" in f["message"]


def test_width_mismatch_when_aux_capture_is_disabled(world):
    r = compare(world.train(0), world.capture(0, boundaries=[10]))
    f = finding(r, "width_mismatch")
    assert codes(r) == {"width_mismatch"}
    assert (f["a_width"], f["b_width"], f["b_slots"]) == (192, 64, 1)
    assert "disabled" in f["message"]
    assert len(r["matrix"]) == 1 and len(r["matrix"][0]) == 3  # still compared against every A slot


@pytest.mark.parametrize("shift", [1, -1])
def test_token_shift_rows_against_ids(world, shift):
    p = world.prompts[0]
    states, _ = world.run(p.ids, torch.bfloat16)
    n = len(p.ids) - 1
    rows = slice(1, None) if shift == 1 else slice(0, n)
    ids = p.ids[:n] if shift == 1 else p.ids[1:]  # B row t holds A's row t + shift
    b = Sample(path="b", schema="t", slots=[Slot(states[x][rows], f"aux{k}") for k, x in enumerate(AUX)],
               ids=torch.tensor(ids))
    r = compare(world.train(0), b)
    f = finding(r, "token_shift")
    assert codes(r) == {"token_shift"} and f["offset"] == shift
    assert r["alignment"]["method"] == "hidden" and r["slots"][0]["cos_mean"] > 0.999


def test_token_divergence_at_the_template(world):
    p = world.prompts[0]
    seq = p.ids[:5] + [8] + p.ids[5:]  # the engine's chat template adds a token
    r = compare(world.train(0), world.capture(ids=seq))
    f = finding(r, "token_divergence")
    assert codes(r) == {"token_divergence"} and f["severity"] == "error"
    assert f["position"] == 5 and f["realign_offset"] == -1 and not f["in_response"]
    assert r["alignment"]["diverges_at"] == 5 and r["alignment"]["length"] == 5


def test_unrelated_sample_other_request_states(world):
    a = world.train(0)
    other = world.capture(2)
    n = min(a.valid_len, other.tokens)
    b = Sample(path="b", schema="t", slots=[Slot(s.tensor[:n], s.label) for s in other.slots],
               ids=a.ids[:n].clone())  # ids of this request, states of another
    r = compare(a, b)
    f = finding(r, "unrelated_sample")
    assert codes(r) == {"unrelated_sample"} and f["best_cosine"] < 0.35
    assert f["shared_prefix"] >= 1  # the shared system prompt rows do agree


def test_scale_mismatch_reports_the_factor(world):
    b = world.capture(0)
    for s in b.slots:
        s.tensor = s.tensor * 0.25
    r = compare(world.train(0), b)
    f = finding(r, "scale_mismatch")
    assert codes(r) == {"scale_mismatch"} and f["severity"] == "warning"
    assert f["factor"] == pytest.approx(0.25, rel=0.01) and f["slots"] == [0, 1, 2]


def test_norm_mismatch_final_taken_before_the_norm(world):
    r = compare(world.train(0), world.capture(0, final="pre", final_norm="post"))  # labelled post, is pre
    f = finding(r, "norm_mismatch")
    assert codes(r) == {"norm_mismatch"}
    assert f["slot"] == "final" and f["after_norm"] == "a" and f["fit_residual"] < 0.1


def test_norm_mismatch_slot_captured_after_the_layer_norm(world):
    b = world.capture(0)
    norm = world.model.blocks[5].attn_norm  # slot 1 = input of layer 5, taken after its input norm
    b.slots[1].tensor = norm(b.slots[1].tensor.float()).bfloat16()
    r = compare(world.train(0), b)
    f = finding(r, "norm_mismatch")
    assert codes(r) == {"norm_mismatch"} and f["slot"] == 1 and f["after_norm"] == "b"


def test_norm_labels_that_differ_by_format_are_only_info(world):
    r = compare(world.train(0), world.capture(0, final="pre", final_norm="pre"))
    assert codes(r) == set()
    assert finding(r, "norm_mismatch")["severity"] == "info"


def test_nonfinite_counted_and_left_out(world):
    b = world.capture(0)
    b.slots[1].tensor = b.slots[1].tensor.clone()
    b.slots[1].tensor[10:12] = float("nan")
    b.slots[0].tensor = b.slots[0].tensor.clone()
    b.slots[0].tensor[20, 3] = float("inf")
    r = compare(world.train(0), b)
    f = finding(r, "nonfinite")
    assert codes(r) == {"nonfinite"}
    assert (f["b"]["nan"], f["b"]["inf"], f["b"]["first_row"]) == (128, 1, 10)
    assert f["b"]["parts"]["aux1"]["first_row"] == 10 and "a" not in f
    n = len(world.prompts[0].ids)
    assert r["slots"][1]["tokens"] == n - 2 and r["slots"][1]["cos_mean"] > 0.999
    assert r["slots"][0]["tokens"] == n - 1


def test_nonfinite_outside_the_compared_rows_is_still_counted(world):
    a = world.train(0, pad=6)
    a.slots[2].tensor = a.slots[2].tensor.clone()
    a.slots[2].tensor[-1, 0] = float("nan")  # in A's padding: never compared
    r = compare(a, world.capture(0))
    f = finding(r, "nonfinite")
    assert f["a"]["nan"] == 1 and f["a"]["first_row"] == a.tokens - 1


def test_padding_rows_taken_as_real(world):
    a = world.train(0, pad=12)
    b = world.capture(ids=a.ids.tolist())  # the engine ran the whole padded row
    b.loss_mask = torch.ones(b.tokens, dtype=torch.int64)
    r = compare(a, b)
    f = finding(r, "padding")
    assert codes(r) == {"padding"} and f["rows"] == 12 and f["b_loss_mask_on_padding"] == 12
    assert r["slots"][0]["tokens"] == a.valid_len  # only A's valid rows were compared


def test_padding_rows_taken_as_real_without_ids(world):
    a = world.train(0, pad=12)
    b = world.capture(ids=a.ids.tolist(), with_ids=False)
    r = compare(a, b)
    assert codes(r) == {"padding"} and finding(r, "padding")["rows"] == 12


def test_loss_mask_on_training_padding(world):
    a = world.train(0, pad=5)
    a.loss_mask = a.loss_mask.clone()
    a.loss_mask[-5:] = 1
    r = compare(a, world.capture(0))
    assert finding(r, "padding")["a_loss_mask_on_padding"] == 5


def test_a_set_cancel_event_stops_the_comparison(world):
    ev = threading.Event()
    ev.set()
    with pytest.raises(Cancelled):
        compare(world.train(0), world.capture(0), cancel=ev)


def test_a_slot_with_no_finite_row_is_not_called_a_mismatch(world):
    a = world.train(0)
    a.slots[0].tensor = torch.full_like(a.slots[0].tensor, float("nan"))
    r = compare(a, world.capture(0))
    assert codes(r) == {"nonfinite"} and r["slots"][0]["cos_mean"] is None
    assert r["slots"][1]["cos_mean"] > 0.999


def test_final_only_samples_compare_their_final_states(world):
    a, b = world.train(0), world.capture(0, final="post", final_norm="post")
    a_final = Sample(path="a", schema="EAGLE-1/2", slots=[], final=a.final, final_norm="post", ids=a.ids)
    b_final = Sample(path="b", schema="EAGLE-1/2", slots=[], final=b.final, final_norm="post", ids=b.ids)
    r = compare(a_final, b_final)
    assert r["findings"] == [] and r["final"]["cos_mean"] > 0.999 and r["matrix"] == []
    r = compare(a, b_final)
    assert codes(r) == {"width_mismatch"} and "B has no auxiliary slots" in r["findings"][0]["message"]


def test_worker_threads_give_the_same_numbers(world, monkeypatch):
    import eagle3_tui.engines.compare.metrics as M

    monkeypatch.setattr(M, "CHUNK_ELEMENTS", 8 * 64 * 7)  # 7 rows per chunk: many chunks
    started = []
    real_thread = threading.Thread
    monkeypatch.setattr(threading, "Thread", lambda *a, **k: started.append(1) or real_thread(*a, **k))
    a, b = world.train(0, pad=3), world.capture(0, final="post", final_norm="post")
    one = compare(a, b)
    assert not started
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        two = compare(a, b)
        assert torch.get_num_threads() == 2
        seen = []
        t = real_thread(target=lambda: seen.append(torch.get_num_threads()))
        t.start()
        t.join()
        assert seen == [2]  # new threads get the caller's setting back
    finally:
        torch.set_num_threads(before)
    assert len(started) == 3 and two == one  # one for the comparison, two for the chunks
