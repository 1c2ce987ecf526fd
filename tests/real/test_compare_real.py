"""compare on the real model: a correct capture (one bf16 request, eager attention) against its
SpecForge training sample (bf16, SDPA, right-padded batch) is silent; another request's states are
named unrelated_sample, not a layer mismatch (a real model's rows share a common direction: another
prompt's median cosine is ~0.5..0.65 there, which the random-model threshold of 0.35 took for
"related"); a capture one boundary deeper is a slot_mismatch."""

from __future__ import annotations

from eagle3_tui.engines.compare import compare_files


def _codes(r):
    return {f["code"] for f in r["findings"] if not f.get("expected")}


def test_a_correct_real_capture_compares_silent(real_files):
    r = compare_files(str(real_files["train"]), str(real_files["ok"]))
    assert "error" not in r, r.get("error")
    assert _codes(r) == set(), r["findings"]
    assert r["alignment"]["length"] == real_files["valid"]  # the padding is not compared


def test_another_requests_states_are_unrelated_not_other_layers(real_files):
    r = compare_files(str(real_files["train"]), str(real_files["other_request"]))
    assert _codes(r) == {"unrelated_sample"}, r["findings"]
    # the shared system prompt agrees, the rest does not
    assert next(f for f in r["findings"] if f["code"] == "unrelated_sample")["shared_prefix"] > 10


def test_a_capture_one_boundary_deeper_is_a_slot_mismatch(real_files):
    r = compare_files(str(real_files["train"]), str(real_files["one_deeper"]))
    assert "slot_mismatch" in _codes(r) and "unrelated_sample" not in _codes(r), r["findings"]
