"""The scan's per-file statistics as they were before issue 30 (engines/scan/rows.py at 155dd3e:
means over every valid row read, massive-activation rows included), kept verbatim as the baseline
of bench_scan_real.py only: the robust statistics must cost at most 1.1x these on the same files.
Not used by the tool."""

from __future__ import annotations

import math
from typing import Any

from eagle3_tui.engines.scan.rows import _finite, _signature_of


def finite_summary(norms, cos, n_valid: int, valid: int, row0_stratum: bool, nan: list, inf: list,
                   first: list, n_slots: int, has_final: bool, slots_same_width: bool):
    """part_stats and signature at once when the valid rows read are the first n_valid of norms:
    one reduction and one transfer to Python instead of a dozen small torch ops (what a small
    file's statistics cost). None when a norm is not finite (the sums say so: norms are >= 0),
    for the exact path; finite norms make finite cosines."""
    import torch

    p = len(norms)
    vn = norms[:, :n_valid]
    pieces = [vn.sum(1), vn.amax(1), norms[:, n_valid:].sum(1), vn[:, 0]]
    if cos is not None:
        pieces.append(cos[:, :n_valid].sum(1))
    flat = torch.cat(pieces).tolist()
    if not all(map(math.isfinite, flat)):
        return None
    sums, tops, pads, row0, cos_sums = flat[:p], flat[p : 2 * p], flat[2 * p : 3 * p], flat[3 * p : 4 * p], flat[4 * p :]
    stats = []
    for i in range(p):
        mean = sums[i] / n_valid
        if row0_stratum and n_valid > 1:  # row 0 is its own stratum (part_stats says why)
            mean = (row0[i] + (valid - 1) * (sums[i] - row0[i]) / (n_valid - 1)) / valid
        stats.append({"norm_mean": _finite(mean), "norm_max": _finite(tops[i]), "nan": nan[i], "inf": inf[i],
                      "first_nonfinite_row": first[i], "_pad_nonzero": pads[i] > 0})
    plain = [s / n_valid for s in sums]
    sig = _signature_of(plain, [_finite(c / n_valid) for c in cos_sums], n_slots, has_final, slots_same_width)
    return stats, sig


def part_stats(norms, positions, valid: int, nan: list, inf: list, first: list, quick: bool,
                finite_prefix: int | None = None):
    """Per part: the slot record (norm mean and max over the valid rows read).
    finite_prefix: every norm is finite and the valid rows read are the first finite_prefix."""
    import torch

    if finite_prefix:
        vn = norms[:, :finite_prefix]
        mean = vn.sum(1) / finite_prefix
        if quick and finite_prefix > 1 and int(positions[0]) == 0:
            mean = (vn[:, 0] + (valid - 1) * vn[:, 1:].mean(1)) / valid  # row 0 stratum (below)
        pn = norms[:, finite_prefix:]
        pad_nonzero = pn.ne(0).any(1).tolist() if pn.shape[1] else [False] * len(norms)
        return [
            {"norm_mean": _finite(m), "norm_max": _finite(x), "nan": nan[i], "inf": inf[i],
             "first_nonfinite_row": first[i], "_pad_nonzero": bool(pad_nonzero[i])}
            for i, (m, x) in enumerate(zip(mean.tolist(), vn.amax(1).tolist()))
        ]
    in_valid = positions < valid
    vn = norms[:, in_valid]
    ok = torch.isfinite(vn)
    count = ok.sum(1)
    plain = torch.where(ok, vn, 0.0).sum(1) / count.clamp_min(1)
    mean = plain.clone()
    if quick and vn.shape[1] > 1 and int(positions[0]) == 0:
        # Row 0 is its own stratum: real models (and the demo one) put a massive activation on
        # the first token, which would weigh 1/rows in the sample instead of 1/valid in the file.
        strat = (vn[:, 0] + (valid - 1) * vn[:, 1:].mean(1)) / valid
        mean = torch.where(ok.all(1), strat, mean)
    top = torch.where(ok, vn, -math.inf).amax(1) if vn.shape[1] else torch.full((len(norms),), math.nan)
    pn = norms[:, ~in_valid]
    pad_nonzero = (pn != 0).any(1).tolist() if pn.shape[1] else [False] * len(norms)
    has = (count > 0).tolist()
    mean_l, top_l = mean.tolist(), top.tolist()
    stats = [
        {
            "norm_mean": _finite(mean_l[i]) if has[i] else None,
            "norm_max": _finite(top_l[i]) if has[i] else None,
            "nan": nan[i],
            "inf": inf[i],
            "first_nonfinite_row": first[i],
            "_pad_nonzero": bool(pad_nonzero[i]),
        }
        for i in range(len(norms))
    ]
    return stats


def signature(norms, cos, rows, n_slots: int, has_final: bool, slots_same_width: bool,
               finite: bool = False) -> dict[str, Any]:
    """Cheap numbers that tell capture layers apart across files: each slot's norm relative to
    the final state's, and the mean cosine between neighbouring slots (over `rows`: a slice or
    row indices). finite: every norm and cosine is."""
    import torch

    count = (rows.stop - rows.start) if isinstance(rows, slice) else len(rows)
    if not len(norms) or not count:
        return {"rel_final": [], "cos_next": [], "cos_final": None}
    pick = (lambda x: x[:, rows]) if isinstance(rows, slice) else (lambda x: x.index_select(1, rows))
    vn = pick(norms)
    if finite:
        plain = (vn.sum(1) / count).tolist()
        means = (pick(cos).sum(1) / count).tolist() if cos is not None else []
        return _signature_of(plain, [_finite(v) for v in means], n_slots, has_final, slots_same_width)
    fin = torch.isfinite(vn)
    plain = torch.where(fin.any(1), torch.where(fin, vn, 0.0).sum(1) / fin.sum(1).clamp_min(1), math.nan).tolist()
    means: list = []
    if cos is not None:
        c = pick(cos)
        ok = torch.isfinite(c)
        m = torch.where(ok, c, 0.0).sum(1) / ok.sum(1).clamp_min(1)
        means = [_finite(v) if n else None for v, n in zip(m.tolist(), ok.sum(1).tolist())]
    return _signature_of(plain, means, n_slots, has_final, slots_same_width)
