"""What the compare JSON carries for the view: per-token norms, first values and ids of both sides.

Checked against torch on the demo's NaN capture (so non-finite rows are covered too).
"""

from __future__ import annotations

import json

import torch

from eagle3_tui.engines.compare import FIRST_K, compare_files
from eagle3_tui.engines.read.load import load_sample
from tests.helpers.compare_view import SHARD

DOCUMENTED_PAIR_KEYS = {
    "a", "b", "tokens", "cos_mean", "cos_min", "cos_min_b_row", "norm_ratio_mean", "norm_ratio_median",
    "norm_ratio_std", "a_norm_mean", "b_norm_mean", "a_norm_cv", "b_norm_cv", "max_abs_err", "rel_l2_err",
    "within_bf16_tol", "worst_b_row", "worst_a_row", "worst_rel_err", "excluded_rows", "per_token_cos",
}


def close(got: float | None, want: float) -> bool:
    return got is not None and abs(got - want) <= 1e-4 * max(1.0, abs(want))


def test_per_token_values_match_the_tensors(demo):
    a_path, b_path = demo / SHARD / "data_18.ckpt", demo / "infer" / "fault_nan_s18.pt"
    r = compare_files(str(a_path), str(b_path))
    json.dumps(r, allow_nan=False)  # None for NaN/Inf: the result still travels as strict JSON
    a, b = load_sample(str(a_path)), load_sample(str(b_path))
    rows, al = r["rows"], r["alignment"]
    n, a0, b0 = rows["count"], rows["a_start"], rows["b_start"]
    assert n == al["length"] > 40 and a0 == al["a_start"] and b0 == al["b_start"]
    assert rows["a_ids"] == a.ids[a0:a0 + n].tolist()
    assert rows["b_ids"] == b.ids[b0:b0 + n].tolist()
    assert rows["a_loss_mask"] == a.loss_mask[a0:a0 + n].tolist()
    for p, m in enumerate(r["slots"]):
        assert DOCUMENTED_PAIR_KEYS <= set(m), "the documented keys stay"
        ta, tb = a.slots[p].tensor.float(), b.slots[p].tensor.float()
        assert len(m["a_norms"]) == len(m["b_norms"]) == len(m["a_first"]) == len(m["per_token_cos"]) == n
        for i in (0, 1, n // 2, n - 1):
            assert close(m["a_norms"][i], float(ta[a0 + i].norm()))
            assert all(close(g, float(w)) for g, w in zip(m["a_first"][i], ta[a0 + i, :FIRST_K]))
            if torch.isfinite(tb[b0 + i]).all():
                assert close(m["b_norms"][i], float(tb[b0 + i].norm()))
                assert all(close(g, float(w)) for g, w in zip(m["b_first"][i], tb[b0 + i, :FIRST_K]))
    # README: NaN in rows 30-32 of slot 1 -> no norm there, and the first values say which are NaN
    nan_rows = [i + b0 for i, v in enumerate(r["slots"][1]["b_norms"]) if v is None]
    assert nan_rows == [30, 31, 32]
    nan_first = r["slots"][1]["b_first"][30 - b0]
    assert [v is None for v in nan_first] == torch.isnan(b.slots[1].tensor[30, :FIRST_K].float()).tolist()
    assert r["slots"][0]["b_norms"][30 - b0] is not None


def test_values_are_short_decimals(demo):
    """Rounded to 5 significant digits: the JSON that crosses SSH stays small."""
    r = compare_files(str(demo / SHARD / "data_0.ckpt"), str(demo / "infer" / "ok_bf16_s0.pt"))
    values = [v for m in r["slots"] for row in m["a_first"] for v in row] + r["slots"][0]["a_norms"]
    assert values and all(len(repr(abs(v)).replace(".", "").lstrip("0")) <= 5 or "e" in repr(v) for v in values)
    assert r["final"]["a_norms"] and r["final"]["b_first"]
