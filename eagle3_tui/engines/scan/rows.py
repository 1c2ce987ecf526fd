"""What a scan record keeps of the rows read (rows_pass.py gives their norms and cosines): each
part's statistics (norm mean, bulk and max, NaN/Inf), the layer signature, and the
massive-activation rows both set aside (massive_rows).

torch and the standard library only (shipped to the remote box by the agent).
"""

from __future__ import annotations

import math
from typing import Any

#: a valid row whose norm in some part is this many times that part's median row norm is a
#: massive activation (massive_rows): SmolLM2-135M's row 0 is 155x the median at b15, 10x at b30,
#: while its other rows stay within 4.5x of the median at every boundary. Lower than the views'
#: mark (engines/read/massive.MASSIVE_FACTOR, 20x): the scan only sets rows aside for its means,
#: where an ordinary row left out costs nothing, while a view names each marked row to the user
MASSIVE = 10.0


def massive_rows(vn):
    """bool [R]: the rows of vn [P, R] (norms of the valid rows read, NaN where not finite) whose
    norm in some part is MASSIVE times that part's median row norm. Real models put a residual
    norm of ~25,000 on a few tokens (the first token, <|im_start|>) against ~150-600 elsewhere at
    the middle layers (SmolLM2-135M: b15 row 0 25,139 vs median 163): one such row weighs more than
    the other 63 of a quick scan's rows together, so a mean over them follows how many such rows a
    prompt has, not the capture. The signature and norm_bulk set them aside."""
    med = vn.nanmedian(1, keepdim=True).values
    return (vn > MASSIVE * med).any(0) & (med > 0).all()  # a part with a median of 0: no yardstick


def prefix_summary(norms, cos, n_valid: int, valid: int, row0_stratum: bool, nan: list, inf: list,
                   first: list, n_slots: int, has_final: bool, slots_same_width: bool):
    """part_stats and signature at once when the valid rows read are the first n_valid of norms:
    the norms and cosines moved to Python at once and summed there (on a small file the per-op
    cost of torch, not the arithmetic, is what its statistics cost: a dozen small ops were twice
    these). The massive-activation rows (massive_rows, the same rows and medians) are taken off
    the sums for norm_bulk and the signature. A norm or cosine that is not finite (a NaN in a
    row) is left out as part_stats and signature leave it out (_nonfinite_summary)."""
    p = norms.shape[0]
    rows = norms.tolist()
    cos_rows = [c[:n_valid] for c in cos.tolist()] if cos is not None else []
    sums = [sum(r[:n_valid]) for r in rows]
    pads = [sum(r[n_valid:]) for r in rows]
    cos_sums = [sum(c) for c in cos_rows]
    if not all(map(math.isfinite, sums + pads + cos_sums)):
        return _nonfinite_summary(rows, cos_rows, n_valid, valid, row0_stratum, nan, inf, first, n_slots, has_final,
                                  slots_same_width)
    # torch's lower median (massive_rows' nanmedian of finite norms), of the float32 values as such
    meds = [sorted(r[:n_valid])[(n_valid - 1) // 2] for r in rows]
    tops = [max(r[:n_valid]) for r in rows]
    big: set[int] = set()
    if min(meds) > 0:  # a part with a median of 0: no yardstick
        for r, m, top in zip(rows, meds, tops):
            if top > MASSIVE * m:
                big.update(j for j, v in enumerate(r[:n_valid]) if v > MASSIVE * m)
    bulk = [s - sum(r[j] for j in big) for s, r in zip(sums, rows)] if big else sums
    bulk_cos = [s - sum(c[j] for j in big) for s, c in zip(cos_sums, cos_rows)] if big else cos_sums
    kept = n_valid - len(big)
    stats = []
    for i in range(p):
        mean = sums[i] / n_valid
        if row0_stratum and n_valid > 1:  # row 0 is its own stratum (part_stats says why)
            mean = (rows[i][0] + (valid - 1) * (sums[i] - rows[i][0]) / (n_valid - 1)) / valid
        stats.append({"norm_mean": _finite(mean), "norm_bulk": _finite(bulk[i] / kept), "norm_max": _finite(tops[i]),
                      "nan": nan[i], "inf": inf[i], "first_nonfinite_row": first[i], "_pad_nonzero": pads[i] > 0})
    sig = _signature_of([b / kept for b in bulk], [_finite(c / kept) for c in bulk_cos], n_slots, has_final,
                        slots_same_width, len(big))
    return stats, sig


def _nonfinite_summary(rows: list, cos_rows: list, n_valid: int, valid: int, row0_stratum: bool, nan: list,
                       inf: list, first: list, n_slots: int, has_final: bool, slots_same_width: bool):
    """prefix_summary of norms (rows: per part, as a list) or cosines some of which are not
    finite: each sum, count, median and maximum over a part's finite values alone, the massive
    rows found among them, as part_stats and signature do in torch (which cost a NaN file ~0.8 ms
    more than any other). The arithmetic of the finite case where a part has no bad value."""
    ok = math.isfinite
    fins = [[v for v in r[:n_valid] if ok(v)] for r in rows]
    meds = [sorted(f)[(len(f) - 1) // 2] if f else math.nan for f in fins]
    big: set[int] = set()
    if all(m > 0 for m in meds):  # a part with a median of 0, or none: no yardstick
        for r, m in zip(rows, meds):
            big.update(j for j, v in enumerate(r[:n_valid]) if ok(v) and v > MASSIVE * m)
    stats, plain = [], []
    for i, (r, f) in enumerate(zip(rows, fins)):
        s = sum(f)
        gone = [r[j] for j in big if ok(r[j])]
        kept = len(f) - len(gone)
        bulk = (s - sum(gone)) / kept if kept else math.nan
        mean = s / len(f) if f else math.nan
        if row0_stratum and n_valid > 1 and len(f) == n_valid:  # row 0 is its own stratum (part_stats says why)
            mean = (r[0] + (valid - 1) * (s - r[0]) / (n_valid - 1)) / valid
        stats.append({"norm_mean": _finite(mean), "norm_bulk": _finite(bulk), "norm_max": _finite(max(f)) if f else None,
                      "nan": nan[i], "inf": inf[i], "first_nonfinite_row": first[i],
                      "_pad_nonzero": any(v != 0 for v in r[n_valid:])})  # (NaN is not 0)
        plain.append(bulk)
    means = []
    for c in cos_rows:
        fin = [v for v in c if ok(v)]
        gone = [c[j] for j in big if ok(c[j])]
        kept = len(fin) - len(gone)
        means.append(_finite((sum(fin) - sum(gone)) / kept) if kept else None)
    return stats, _signature_of(plain, means, n_slots, has_final, slots_same_width, len(big))


def part_stats(norms, positions, valid: int, nan: list, inf: list, first: list, quick: bool,
                finite_prefix: int | None = None):
    """Per part: the slot record (norm mean and max over the valid rows read, and norm_bulk: the
    mean without the massive-activation rows, see massive_rows).
    finite_prefix: every norm is finite and the valid rows read are the first finite_prefix."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if finite_prefix:
        vn = norms[:, :finite_prefix]
        mean = vn.sum(1) / finite_prefix
        if quick and finite_prefix > 1 and int(positions[0]) == 0:
            mean = (vn[:, 0] + (valid - 1) * vn[:, 1:].mean(1)) / valid  # row 0 stratum (below)
        bulk = vn[:, ~massive_rows(vn)].mean(1)
        pn = norms[:, finite_prefix:]
        pad_nonzero = pn.ne(0).any(1).tolist() if pn.shape[1] else [False] * len(norms)
        return [
            {"norm_mean": _finite(m), "norm_bulk": _finite(b), "norm_max": _finite(x), "nan": nan[i], "inf": inf[i],
             "first_nonfinite_row": first[i], "_pad_nonzero": bool(pad_nonzero[i])}
            for i, (m, b, x) in enumerate(zip(mean.tolist(), bulk.tolist(), vn.amax(1).tolist()))
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
    bulk_ok = ok & ~massive_rows(torch.where(ok, vn, math.nan)) if vn.shape[1] else ok
    bulk = torch.where(bulk_ok, vn, 0.0).sum(1) / bulk_ok.sum(1).clamp_min(1)
    top = torch.where(ok, vn, -math.inf).amax(1) if vn.shape[1] else torch.full((len(norms),), math.nan)
    pn = norms[:, ~in_valid]
    pad_nonzero = (pn != 0).any(1).tolist() if pn.shape[1] else [False] * len(norms)
    has, has_bulk = (count > 0).tolist(), (bulk_ok.sum(1) > 0).tolist()
    mean_l, bulk_l, top_l = mean.tolist(), bulk.tolist(), top.tolist()
    stats = [
        {
            "norm_mean": _finite(mean_l[i]) if has[i] else None,
            "norm_bulk": _finite(bulk_l[i]) if has_bulk[i] else None,
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
    the final state's, and the mean cosine between neighbouring slots, over `rows` (a slice or
    row indices) less the massive-activation rows (massive_rows; "massive": how many were set
    aside). finite: every norm and cosine is."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    count = (rows.stop - rows.start) if isinstance(rows, slice) else len(rows)
    if not len(norms) or not count:
        return {"rel_final": [], "cos_next": [], "cos_final": None, "massive": 0}
    pick = (lambda x: x[:, rows]) if isinstance(rows, slice) else (lambda x: x.index_select(1, rows))
    vn = pick(norms)
    if finite:
        keep = ~massive_rows(vn)
        kept = int(keep.sum())
        plain = (vn[:, keep].sum(1) / kept).tolist()
        kept_means = (pick(cos)[:, keep].sum(1) / kept).tolist() if cos is not None else []
        return _signature_of(plain, [_finite(v) for v in kept_means], n_slots, has_final, slots_same_width, count - kept)
    big = massive_rows(torch.where(torch.isfinite(vn), vn, math.nan))
    fin = torch.isfinite(vn) & ~big
    plain = torch.where(fin.any(1), torch.where(fin, vn, 0.0).sum(1) / fin.sum(1).clamp_min(1), math.nan).tolist()
    means: list = []
    if cos is not None:
        c = pick(cos)
        ok = torch.isfinite(c) & ~big
        m = torch.where(ok, c, 0.0).sum(1) / ok.sum(1).clamp_min(1)
        means = [_finite(v) if n else None for v, n in zip(m.tolist(), ok.sum(1).tolist())]
    return _signature_of(plain, means, n_slots, has_final, slots_same_width, int(big.sum()))


def _signature_of(plain: list, means: list, n_slots: int, has_final: bool, slots_same_width: bool,
                  massive: int = 0) -> dict[str, Any]:
    ref = plain[n_slots] if has_final else (plain[0] if n_slots else math.nan)
    rel = [_finite(m / ref) if ref and math.isfinite(ref) else None for m in plain[:n_slots]]
    cos_next = means[: max(n_slots - 1, 0)] if slots_same_width else []
    cos_final = means[n_slots - 1] if has_final and n_slots and len(means) >= n_slots else None
    return {"rel_final": rel, "cos_next": cos_next, "cos_final": cos_final, "massive": massive}


def _finite(v: float | None) -> float | None:
    if v is None or not math.isfinite(v):
        return None
    return v
