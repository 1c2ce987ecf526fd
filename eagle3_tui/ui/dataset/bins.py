"""The dataset view's per-slot norm histograms (what the strips draw): binned over a robust
range so a few massive or scattered files do not flatten the rest, those outside it counted
apart. No Textual here."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from eagle3_tui.ui.dataset.model import DatasetRows

BINS = 40
OUTLIER_Z = 5.0


@dataclass
class SlotBins:
    """The distribution of one slot's norm_mean across files, binned once (the strip only
    draws `counts`); files beyond OUTLIER_Z robust SDs from the median are outliers, counted
    apart (`low`, `high`) and outside [lo, hi]."""

    label: str
    counts: list[int]
    lo: float
    hi: float
    median: float
    low: int
    high: int
    files: int
    #: values outside [cut_lo, cut_hi] are outliers (the table colours those cells)
    cut_lo: float
    cut_hi: float


def slot_bins(label: str, values: list[float], bins: int = BINS, *, presorted: bool = False) -> SlotBins | None:
    if not values:
        return None
    xs = values if presorted else sorted(values)
    n = len(xs)
    med = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    mad = _median_deviation(xs, med) * 1.4826
    spread = mad if mad > 1e-12 else ((xs[-1] - xs[0]) / 4 or abs(med) * 1e-3 or 1e-3)
    cut_lo, cut_hi = med - OUTLIER_Z * spread, med + OUTLIER_Z * spread
    a, b = bisect_left(xs, cut_lo), bisect_right(xs, cut_hi)
    lo, hi = (xs[a], xs[b - 1]) if b > a else (med, med)
    if hi > lo:
        step = (hi - lo) / bins
        edges = [bisect_left(xs, lo + step * j, a, b) for j in range(bins)] + [b]
        counts = [edges[j + 1] - edges[j] for j in range(bins)]
    else:
        counts = [0] * bins
        counts[bins // 2] = b - a
    return SlotBins(label, counts, lo, hi, med, a, n - b, n, cut_lo, cut_hi)


def _median_deviation(xs: list[float], med: float) -> float:
    """The (n//2)-th smallest |x - med| of sorted xs, without sorting the deviations.

    Left of med the deviations (med - x) ascend leftwards, right of it (x - med) ascend
    rightwards: two sorted sequences, and the k-th smallest of two sorted sequences is found by
    binary search on how many come from the left one. (med - x equals abs(x - med) exactly.)
    """
    n = len(xs)
    m = bisect_left(xs, med)
    a, b, k = m, n - m, n // 2 + 1  # the k-th smallest, 1-based

    def left(j: int) -> float:  # j-th smallest deviation left of med, 0-based
        return med - xs[m - 1 - j]

    def right(j: int) -> float:
        return xs[m + j] - med

    lo, hi = max(0, k - b), min(a, k)
    while lo < hi:  # the smallest i (taken from the left) with left(i) >= right(k - i - 1)
        i = (lo + hi) // 2
        if left(i) < right(k - i - 1):
            lo = i + 1
        else:
            hi = i
    i, j = lo, k - lo
    return max(left(i - 1) if i > 0 else -math.inf, right(j - 1) if j > 0 else -math.inf)


def part_bins(rows: DatasetRows, part: int | None) -> SlotBins | None:
    """The SlotBins of one slot (None: the final state), over the files with it."""
    return slot_bins("final" if part is None else f"slot {part}", rows.norms(part), presorted=True)


def dataset_bins(rows: DatasetRows) -> list[SlotBins]:
    """One SlotBins per slot (and the final state), over the files with that slot."""
    out = [part_bins(rows, part) for part in rows.parts()]
    return [b for b in out if b is not None]
