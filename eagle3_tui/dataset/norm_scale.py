"""Finding `norm_scale`: files whose every slot holds the group's states times one factor (the
layer signature compares directions and norm ratios, so a file scaled as a whole, such as a
capture multiplied by 4 or taken in another dtype scale, passes it unseen).

A file is named when each slot's typical norm (norm_bulk: the mean norm of the rows read less the
massive-activation rows) is the same multiple of the median of that slot over
the files of the common layout (within CONSISTENT of each other) and that multiple is at least
FACTOR away from 1. A file whose slots move by different factors is another layer, not a scale:
the signature findings speak of it. Standard library only.
"""

from __future__ import annotations

import math
from collections import Counter

from eagle3_tui.dataset.shapes import DatasetRecord
from eagle3_tui.engines.results.findings import Finding, finding

FACTOR = 2.0  # at least this many times the group's norms (or at most its inverse)
CONSISTENT = 1.5  # the slots' factors agree within this ratio: one scale, not other layers
MIN_FILES = 4  # a median over fewer files is no yardstick


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def _norms(r: DatasetRecord) -> list[float] | None:
    """Each slot's typical norm: norm_bulk (without the massive-activation rows: on a real model
    one first-token row at ~25,000 moves a short file's mean norm 1.8x against a long one's),
    norm_mean in a record made before it."""
    vals = [s.get("norm_bulk") if s.get("norm_bulk") is not None else s.get("norm_mean") for s in r.get("slots") or []]
    norms = [v for v in vals if v is not None and math.isfinite(v) and v > 0]
    if not vals or len(norms) < len(vals):
        return None
    return norms


def norm_scale(samples: list[DatasetRecord]) -> list[Finding]:
    rows = [(r, n) for r, n in ((r, _norms(r)) for r in samples) if n is not None]
    if len(rows) < MIN_FILES:
        return []
    common = Counter((r.get("k"), r.get("hidden")) for r, _ in rows).most_common(1)[0][0]
    rows = [(r, n) for r, n in rows if (r.get("k"), r.get("hidden")) == common]
    if len(rows) < MIN_FILES:
        return []
    medians = [_median([n[p] for _, n in rows]) for p in range(len(rows[0][1]))]
    named = []
    for r, n in rows:
        factors = [v / m for v, m in zip(n, medians, strict=False)]
        if max(factors) / min(factors) > CONSISTENT:
            continue
        factor = math.exp(sum(math.log(f) for f in factors) / len(factors))
        if factor >= FACTOR or factor <= 1 / FACTOR:
            named.append((r["path"], factor))
    if not named or len(named) * 2 >= len(rows):
        return []  # half the files or more: there is no one scale of "the group" to depart from
    named.sort(key=lambda x: -abs(math.log(x[1])))
    shown = ", ".join(f"{p} ({f:.1f}x)" for p, f in named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
    return [finding(
        "norm_scale", "warning",
        f"{len(named)} of {len(rows)} files hold every slot at one multiple of the others' norms "
        f"(slot medians {', '.join(f'{m:.3g}' for m in medians)}): {shown}; the same directions at "
        "another magnitude, as a capture scaled on the way (a dtype cast, a multiplied output) leaves behind",
        paths=[p for p, _ in named], factors=[round(f, 3) for _, f in named],
    )]
