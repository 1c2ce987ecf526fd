"""Per-token norm strips that massive-activation rows do not flatten (engines/read/massive.py says
which rows those are): the other rows are scaled to a robust top (the 99th percentile of their
norms), the massive ones drawn as MASSIVE_MARK, and one line says what they are. Pure Python (no
Textual): the sample view and the compare view draw with it, tests read it directly."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from eagle3_tui.engines.read.massive import massive_note, massive_rows, median_norm, robust_top
from eagle3_tui.ui.shared.format import bin_max, num, spark_levels, spark_scale

MASSIVE_MARK = "▲"


@dataclass
class NormMarks:
    """One slot's norms as a strip: its massive rows and the scale of the others."""

    massive: list[int] = field(default_factory=list)
    median: float | None = None
    top: float | None = None  # the robust top of the non-massive rows (None: no massive row)
    note: str = ""

    def ratio(self, value: float | None) -> float | None:
        return value / self.median if value is not None and self.median else None


def norm_marks(norms: Sequence[float | None], valid: int | None) -> NormMarks:
    rows = massive_rows(norms, valid)
    if not rows:
        return NormMarks()
    real = norms[:valid] if valid is not None else norms  # padding may be half massive: not the scale
    return NormMarks(rows, median_norm(norms, valid), robust_top(real, rows), massive_note(norms, rows, valid))


def strip(norms: Sequence[float | None], ranges: list[tuple[int, int]], marks: NormMarks
          ) -> tuple[str, list[bool], float | None, float | None]:
    """(characters, per column whether it is marked (massive, or above the scale), low, high) for
    `norms` binned into `ranges`. Without massive rows: the old strip (4x the median tops it)."""
    if not marks.massive:
        binned = bin_max(norms, ranges)
        low, high = spark_scale(binned)
        flags = [high is not None and v is not None and v > high for v in binned]
        return spark_levels(binned, low, high), flags, low, high
    skip = set(marks.massive)
    rest = [None if i in skip else v for i, v in enumerate(norms)]
    binned = bin_max(rest, ranges)
    finite = [v for v in binned if v is not None]
    low, high = (min(finite), marks.top) if finite else (None, None)
    chars = list(spark_levels(binned, low, high))
    flags = [high is not None and v is not None and v > high for v in binned]
    for col, (start, end) in enumerate(ranges):
        if any(i in skip for i in range(start, end)):
            chars[col], flags[col] = MASSIVE_MARK, True
    return "".join(chars), flags, low, high


def range_label(slot: Mapping[str, Any], marks: NormMarks, width: int = 5) -> str:
    """'min‥max' of a slot's norms; with massive rows the top of the scale the strip uses, marked."""
    if marks.massive and marks.top is not None:
        return f"{num(slot.get('norm_min'), width)}‥{num(marks.top, width)}{MASSIVE_MARK}"
    return f"{num(slot.get('norm_min'), width)}‥{num(slot.get('norm_max'), width)}"


def strongest(named: Sequence[tuple[str, NormMarks, Sequence[float | None]]]) -> str:
    """The legend line for the slot whose massive row stands out most: 'row 0: massive activation
    'aux1, row 0: massive activation 25,139 (155x the median)', '' when no slot has one."""
    best, best_ratio = "", 0.0
    for label, marks, norms in named:
        if not marks.massive:
            continue
        ratio = max(marks.ratio(norms[i]) or 0.0 for i in marks.massive)
        if ratio > best_ratio:
            best, best_ratio = f"{label}, {marks.note}", ratio
    return best


def at_row(named: Sequence[tuple[str, NormMarks, Sequence[float | None]]], row: int) -> str:
    """'massive activation: aux1 155x, aux2 52x the median' for a row that is massive somewhere."""
    parts = [f"{label} {num(marks.ratio(norms[row]), 4)}x" for label, marks, norms in named
             if row in marks.massive and row < len(norms)]
    return f"massive activation: {', '.join(parts)} the median" if parts else ""
