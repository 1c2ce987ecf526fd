"""Padding taken as tokens (padding): B rows that land on A's padding, and a loss_mask of 1 on
either side's trailing padding rows (padding that would be trained on). A longer capture past A's
valid rows is told apart by the main pass (metrics.py check_pad_tail).

Runs on the remote box too (shipped by the agent): the standard library only.
"""

from __future__ import annotations

from typing import TypedDict

from eagle3_tui.engines.compare.sides import FindingList, Sides
from eagle3_tui.engines.read.sample import Sample


def check_padding_flags(sides: Sides, findings: FindingList, pad_rows: int) -> None:
    """`pad_rows`: B rows on A's padding, as the alignment found them and the main pass kept them."""
    notes: list[str] = []
    details: PaddingDetails = {}
    if pad_rows:
        notes.append(f"B's last {pad_rows} aligned rows fall on A's padding (A has {sides.a_valid} valid of "
                     f"{sides.a.tokens} rows): padding taken as real tokens; only A's valid rows were compared")
        details["rows"] = pad_rows
    for side, s in (("A", sides.a), ("B", sides.b)):
        bad = _mask_on_padding(s)
        if bad:
            notes.append(f"{side}'s loss_mask is 1 on {bad} trailing rows with id 0 (padding)")
            if side == "A":
                details["a_loss_mask_on_padding"] = bad
            else:
                details["b_loss_mask_on_padding"] = bad
    if notes:
        findings.add("padding", "warning", "; ".join(notes), **details)


class PaddingDetails(TypedDict, total=False):
    rows: int  # B rows on A's padding
    a_loss_mask_on_padding: int
    b_loss_mask_on_padding: int


def _mask_on_padding(s: Sample) -> int:
    """Trailing rows with id 0 whose loss_mask is 1 (padding that would be trained on)."""
    if s.ids is None or s.loss_mask is None:
        return 0
    ids, mask = s.ids.tolist(), s.loss_mask.tolist()
    count = 0
    for i in range(len(ids) - 1, -1, -1):
        if ids[i] != 0:
            break
        if mask[i]:
            count += 1
    return count if count and count < len(ids) else 0
