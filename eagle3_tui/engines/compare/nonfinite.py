"""NaN/Inf anywhere in either side (nonfinite): counted per part with the first row that has
one, screened cheaply on the rows the main pass did not already reduce.

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

from typing import TypedDict

from eagle3_tui.engines.compare.measures import Measures
from eagle3_tui.engines.compare.sides import FindingList, Sides
from eagle3_tui.engines.compare.thresholds import CHUNK_ELEMENTS
from eagle3_tui.engines.read.sample import Sample


def check_nonfinite(sides: Sides, findings: FindingList, m: Measures | None) -> None:
    """NaN/Inf anywhere in either side; `m`: the main pass's squared row norms (None: not measured)."""
    counted = {}
    for side, sample in (("a", sides.a), ("b", sides.b)):
        known = None
        if m is not None:  # rows of the main pass: their squared norms say it already
            b0, b1, off = m.span
            start = b0 + off if side == "a" else b0
            known = (start, m.sq_norms[side])
        counts = nonfinite_counts(sample, known)
        if counts["nan"] or counts["inf"]:
            counted[side] = counts
    if not counted:
        return
    text = "; ".join(
        f"{k.upper()} has {v['nan']} NaN and {v['inf']} Inf values, "
        f"first in row {v['first_row']} ({v['first_part']})"
        for k, v in counted.items())
    findings.add("nonfinite", "error", f"{text}; those rows are left out of the metrics", **counted)


class PartNonfinite(TypedDict):
    nan: int
    inf: int
    first_row: int  # the first row that has one


class NonfiniteCounts(TypedDict):
    """NaN/Inf counts of a sample (nonfinite_counts): the nonfinite finding's details per side."""

    nan: int
    inf: int
    first_row: int | None
    first_part: str | None  # the label of the part of the first row
    parts: dict[str, PartNonfinite]  # by part label, those that have one


def nonfinite_counts(sample: Sample, known=None) -> NonfiniteCounts:
    """NaN/Inf counts of every part of `sample`, with the first row that has one.

    known = (first row, squared row norms [n, parts]) for rows already reduced by the main pass:
    only those with a non-finite squared norm are looked at again. Other rows are screened by
    their float32 row sums (one cheap reduction; isfinite on bf16 is slow on CPU), and only
    rows that fail the screen are counted element by element.
    """
    # lazy: torch: loaded when used, never at start-up
    import torch

    nan = inf = 0
    first_row, first_part = None, None
    parts = [(s.label, s.tensor) for s in sample.slots]
    if sample.final is not None:
        parts.append(("final", sample.final.tensor))
    per: dict[str, PartNonfinite] = {}
    for p, (label, t) in enumerate(parts):
        rows = t.shape[0]
        suspects: list[int] = []
        lo = hi = 0
        if known is not None and p < known[1].shape[1]:  # a final only one side has is not in it
            start, sq = known
            lo, hi = start, start + sq.shape[0]
            suspects += (start + (~torch.isfinite(sq[:, p])).nonzero().flatten()).tolist()
        step = max(1, CHUNK_ELEMENTS // max(1, t.shape[1]))
        for a, b in ((0, lo), (hi, rows)):
            for r in range(a, b, step):
                sums = t[r:min(b, r + step)].float().sum(-1)
                suspects += (r + (~torch.isfinite(sums)).nonzero().flatten()).tolist()
        pn = pi = 0
        first: int | None = None
        for r in sorted(suspects):
            row = t[r].float()
            rn, ri = int(torch.isnan(row).sum()), int(torch.isinf(row).sum())
            if rn or ri:
                pn, pi = pn + rn, pi + ri
                first = r if first is None else first
        if first is not None:  # pn or pi: the first row that has one is set
            per[label] = {"nan": pn, "inf": pi, "first_row": first}
            nan, inf = nan + pn, inf + pi
            if first_row is None or first < first_row:
                first_row, first_part = first, label
    return {"nan": nan, "inf": inf, "first_row": first_row, "first_part": first_part, "parts": per}
