"""Which layers B's slots hold, from the slot -> slot matches: A's in another order
(slot_permutation), A's each a boundary off (a layer shift: slot_mismatch with its "shift"), or
other layers (slot_mismatch); with compare --model, the boundaries identified say it exactly.

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, TypedDict

from eagle3_tui.engines.compare.identified import IdentifiedSides
from eagle3_tui.engines.compare.rounding import num
from eagle3_tui.engines.compare.sides import FindingList, Sides
from eagle3_tui.engines.compare.thresholds import MATCH_COS, SHIFT_GAIN

if TYPE_CHECKING:
    import torch


def judge_layers(sides: Sides, findings: FindingList, identified: IdentifiedSides, matrix: torch.Tensor,
                 mapping: list[int | None], mismatched: list[SlotMiss], normed: bool) -> None:
    """Name what the slot -> slot matches say: a reordering, a layer shift, or other layers.

    mapping[j] is the A slot B slot j holds (mean cosine >= MATCH_COS) or None; `mismatched`
    lists the B slots that hold no A slot. A shift (every B slot a boundary off, ids read
    under the other convention) keeps the slots ascending: some B slots may land exactly on a
    neighbouring A slot (B_j = A_{j-1} when B is shallower), all at one constant offset."""
    kb = len(mapping)
    matched = {j: i for j, i in enumerate(mapping) if i is not None}
    moved = {j: i for j, i in matched.items() if i != j}
    ascending = all(i1 < i2 for (_, i1), (_, i2) in zip(sorted(matched.items()), sorted(matched.items())[1:]))
    offsets = {i - j for j, i in matched.items()}
    text = ", ".join(f"B{j}=A{m}" if m is not None else f"B{j}=?" for j, m in enumerate(mapping))
    if len(matched) == kb and moved and len(set(matched.values())) == kb and not ascending:
        findings.add("slot_permutation", "error",
                     f"B's slots are A's in another order: {text} (mean cosine >= {MATCH_COS}){identified.said_exactly()}; "
                     "concatenated in list order instead of ascending layer order?", mapping=mapping,
                     **identified.details())
        return
    shifted = bool(moved) and len(offsets) == 1 and not normed and len(matched) + len(mismatched) == kb
    if moved and not shifted:
        if not ascending:  # a reordering with other faults besides
            findings.add("slot_permutation", "error",
                         f"B's slots are A's in another order: {text} (mean cosine >= {MATCH_COS}){identified.said_exactly()}; "
                         "concatenated in list order instead of ascending layer order?", mapping=mapping,
                         **identified.details())
        else:  # ascending, but not at one offset (e.g. two B slots hold the same A slot)
            mismatched = sorted(mismatched + [
                {"slot": j, "nearest": i, "cosine": num(matrix[j, i]), "holds": i} for j, i in moved.items()
            ], key=lambda m: m["slot"])
    if shifted:
        d = offsets.pop()
        listed = sorted(mismatched + [
            {"slot": j, "nearest": i, "cosine": num(matrix[j, i]), "holds": i} for j, i in moved.items()
        ], key=lambda m: m["slot"])
        direction = "shallower" if d < 0 else "deeper"
        shift: LayerShift = {"direction": direction, "slots": d, "boundaries": boundary_shift(sides, identified, d),
                             "told_by": "exact matches"}
        holds = ", ".join(f"B{j} = A{i} ({matrix[j, i]:.3f})" for j, i in sorted(moved.items()))
        rest = ", ".join(f"B{m['slot']}~A{m['nearest']} {m['cosine']:.3f}" for m in mismatched)
        exact = identified.said_exactly()
        findings.add("slot_mismatch", "error",
                     f"{len(listed)} of {kb} B slots are not at their A position: every B slot sits {direction} "
                     f"than A's, {holds} exactly" + (f", {rest} match nothing" if rest else "") +
                     " (ascending, not reordered)" +
                     (exact or ": one boundary off: layer ids read under the other convention"),
                     slots=listed, shift=shift, mapping=mapping, **identified.details())
        return
    if not mismatched:
        return
    parts = ", ".join(f"B{m['slot']}~A{m['nearest']} {m['cosine']:.3f}" for m in mismatched)
    details: MismatchDetails = {"slots": mismatched}
    tail = "captured at other layers, e.g. layer ids read under the other convention"
    if len(mismatched) == kb and not matched:
        adjacent = _shift_direction(matrix)
        if adjacent is not None:
            details["shift"] = {"direction": adjacent, "slots": None, "boundaries": boundary_shift(sides, identified, None),
                                "told_by": "adjacent-slot cosines"}
            tail = (f"every B slot sits {adjacent} than A's (the adjacent-slot cosines say so): a layer "
                    "shift, likely one boundary off: layer ids read under the other convention")
    exact = identified.said_exactly()
    if exact:
        tail = tail.split(", e.g.")[0].split(": a layer shift")[0] + exact
    findings.add("slot_mismatch", "error",
                 f"{len(mismatched)} of {kb} B slots match no A slot (best mean cosine {parts}; "
                 f"the same layer gives > {MATCH_COS}): {tail}", **details, **identified.details())


def boundary_shift(sides: Sides, identified: IdentifiedSides, d: int | None) -> int | None:
    """B's boundary minus A's, when the files label their slots (or the target model
    identified them) and it is one number."""
    a_b = [s.boundary for s in sides.a.slots]
    b_b = [s.boundary for s in sides.b.slots]
    got = identified.boundaries()
    if got is not None and (None in a_b or None in b_b):
        a_b, b_b = got
    known_a, known_b = _known(a_b), _known(b_b)
    if known_a is not None and known_b is not None:
        diffs = {y - x for x, y in zip(known_a, known_b)}
        return diffs.pop() if len(diffs) == 1 else None
    if d is not None and known_a is not None:  # B_j holds A_{j+d}: its boundary is A_{j+d}'s
        diffs = {known_a[j + d] - known_a[j] for j in range(len(known_a)) if 0 <= j + d < len(known_a)}
        return diffs.pop() if len(diffs) == 1 else None
    return None


class SlotMiss(TypedDict, total=False):
    """A B slot at no A position (slot_mismatch's "slots"): the A slot nearest it, and the one it
    holds exactly when it is A's at another position."""

    slot: int
    nearest: int
    cosine: float | None
    holds: int


class LayerShift(TypedDict):
    """slot_mismatch's "shift": every B slot a boundary off A's."""

    direction: str  # "deeper" | "shallower"
    slots: int | None  # B slot j holds A slot j + slots (None: told by the adjacent-slot cosines)
    boundaries: int | None  # B's boundary minus A's, when it is one number
    told_by: str  # "exact matches" | "adjacent-slot cosines"


class MismatchDetails(TypedDict, total=False):
    slots: list[SlotMiss]
    shift: LayerShift


def _shift_direction(matrix: torch.Tensor) -> str | None:
    """"deeper" / "shallower" when every B slot sits past / before its A slot, read from the
    cross-slot cosines next to the diagonal: a B slot one boundary deeper than A_j is nearer
    A_{j+1} (above the diagonal) than B_{j+1} is to A_j (below it), and the other way round.
    None when the two sides do not differ by SHIFT_GAIN."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    k = min(matrix.shape)
    if k < 2:
        return None
    above = torch.stack([matrix[j, j + 1] for j in range(k - 1)])
    below = torch.stack([matrix[j + 1, j] for j in range(k - 1)])
    gap = float((above - below).nanmean())
    if math.isnan(gap) or abs(gap) < SHIFT_GAIN:
        return None
    return "deeper" if gap > 0 else "shallower"


def _known(boundaries: list[int | None]) -> list[int] | None:
    """The boundaries when every one is known, else None."""
    known = [x for x in boundaries if x is not None]
    return known if len(known) == len(boundaries) else None
