"""What `scan` says of the bytes it reads (engines/scan/budget.py counts them): the progress
line, with the rate measured so far and the time the rest takes at it, and how many rows of the
samples a quick scan read (NaN/Inf were looked for in those only)."""

from __future__ import annotations

from typing import TypedDict

from eagle3_tui.dataset.pipeline import progress_text
from eagle3_tui.engines.results.scan import ScanProgressData


def progress_line(p: ScanProgressData) -> str:
    """The progress line: the dataset pipeline's progress text (the dataset view's too)."""
    return "scanning:" + progress_text(p)


class RowsRead(TypedDict, total=False):
    """How much of the samples a quick scan read (nothing for a full scan)."""

    budget: int  # bytes a quick scan reads of a sample at most
    rows_read: int
    rows_total: int


def rows_read(fresh, options) -> RowsRead:
    """How much of the samples a quick scan read: its rows (NaN/Inf were looked for there only)."""
    samples = [r for r in fresh if "error" not in r and r.get("rows_read") is not None]
    if options.full or not samples:
        return {}
    return {"budget": options.budget, "rows_read": sum(r["rows_read"] for r in samples),
            "rows_total": sum(r["tokens"] for r in samples)}
