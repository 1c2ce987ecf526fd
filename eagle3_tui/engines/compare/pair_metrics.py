"""The numbers of one B part against its A part (a slot pair, or the final states): cosine,
norm ratio and error statistics over the compared rows, the worst row, and the per-token values
the UI shows side by side; from the main pass's Measures and its per-row errors (PairErrors).

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from eagle3_tui.engines.compare.measures import Measures, cv
from eagle3_tui.engines.compare.rounding import num, short
from eagle3_tui.engines.compare.sides import Sides
from eagle3_tui.engines.compare.thresholds import FIRST_K
from eagle3_tui.engines.results.compare import PairMetrics

if TYPE_CHECKING:
    import torch


@dataclass
class PairErrors:
    """The main pass's per-row errors of each pair ([n, pairs + final]) and the B rows they are of."""

    rows: torch.Tensor
    errn: torch.Tensor  # L2 norm of B - A
    maxabs: torch.Tensor  # max |B - A|
    beyond: torch.Tensor  # elements beyond bf16 tolerance


def pair_metrics(s: Sides, m: Measures, ia: int, ib: int, col: int, e: PairErrors) -> PairMetrics:
    """B part `ib` against A part `ia` over the compared rows; `col`: the pair's column of `e`."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    h = s.a.hidden
    rows, off = e.rows, m.span[2]
    cos = m.cos[:, ib, ia]
    na_, nb_ = m.norm_a[:, ia], m.norm_b[:, ib]
    ok = torch.isfinite(cos) & torch.isfinite(e.errn[:, col]) & m.real
    count = int(ok.sum())
    label_a: int | str = "final" if ia >= s.ka else ia
    out: PairMetrics = {"a": label_a, "b": "final" if ib >= s.kb else ib, "tokens": count}
    if ia < s.ka:
        out["a_boundary"] = s.a.slots[ia].boundary
        out["b_boundary"] = s.b.slots[ib].boundary
    if count == 0:
        out.update({"cos_mean": None, "cos_min": None, "per_token_cos": [num(c, 5) for c in cos.tolist()]})
        out.update(per_token_values(s, m, ia, ib))
        return out
    c, ra, rb = cos[ok], na_[ok], nb_[ok]
    ratio = rb / ra
    e2 = e.errn[ok, col].pow(2)
    rel_tok = e2.sqrt() / ra
    worst = _first_near(rel_tok.nan_to_num(0), largest=True)
    worst_b = int(rows[ok][worst])
    cmin = _first_near(c, largest=False)
    out.update({
        "cos_mean": num(c.mean()), "cos_min": num(c[cmin]), "cos_min_b_row": int(rows[ok][cmin]),
        "norm_ratio_mean": num(ratio.mean()), "norm_ratio_median": num(ratio.median()),
        "norm_ratio_std": num(ratio.std() if count > 1 else 0.0),
        "a_norm_mean": num(ra.mean()), "b_norm_mean": num(rb.mean()),
        "a_norm_cv": num(cv(ra)), "b_norm_cv": num(cv(rb)),
        "max_abs_err": num(e.maxabs[ok, col].max()),
        "rel_l2_err": num(e2.sum().sqrt() / ra.pow(2).sum().sqrt()),
        "within_bf16_tol": num(1.0 - e.beyond[ok, col].sum() / (count * h)),
        "worst_b_row": worst_b, "worst_a_row": worst_b + off, "worst_rel_err": num(rel_tok[worst]),
        "excluded_rows": int((~ok & m.real).sum()),
        "per_token_cos": [num(v, 5) for v in cos.tolist()],
    })
    out.update(per_token_values(s, m, ia, ib))
    return out


def per_token_values(s: Sides, m: Measures, ia: int, ib: int) -> PairMetrics:
    """Per compared row (B row b_start + i): both sides' L2 norms and first FIRST_K values,
    rounded to 5 significant digits (the UI shows them side by side)."""
    b0, b1, off = m.span
    a_part, b_part = s.a_parts[ia], s.b_parts[ib]
    return {
        "a_norms": short(m.norm_a[:, ia]), "b_norms": short(m.norm_b[:, ib]),
        "a_first": short(a_part[b0 + off:b1 + off, :FIRST_K]),
        "b_first": short(b_part[b0:b1, :FIRST_K]),
    }


def _first_near(values, *, largest: bool, rel: float = 1e-4) -> int:
    """The first row whose value is within `rel` of the extreme: rows that tie up to float noise
    (a scaled capture has the same error on every row) give the same row on every CPU, where
    argmax would pick whichever the last bit favoured."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    top = values.max() if largest else values.min()
    band = rel * max(float(top.abs()), 1e-30)
    near = values >= top - band if largest else values <= top + band
    return int(torch.nonzero(near)[0, 0])
