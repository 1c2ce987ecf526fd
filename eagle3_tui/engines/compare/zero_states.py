"""Parts that are exactly zero on the compared rows (zero_states): a capture that holds no states
(a hook that never fired, a buffer never filled); a zero row has no direction, so every cosine on
it is undefined.

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

from eagle3_tui.engines.compare.measures import Measures
from eagle3_tui.engines.compare.sides import FindingList, Sides


def check_zero_states(sides: Sides, findings: FindingList, m: Measures) -> bool:
    """Parts that are exactly zero on compared rows: a capture that holds no states (a hook
    that never fired, a buffer never filled). Returns True when a whole side is zero, so that
    nothing else is judged from its undefined cosines."""
    zero = m.zero_rows
    n = int(m.real.sum())
    if not n:
        return False
    notes, details, whole_side = [], {}, False
    b0, _b1, off = m.span
    for side, sample in (("a", sides.a), ("b", sides.b)):
        labels = [s.label for s in sample.slots] + (["final"] if sides.both_final else [])
        counts = zero[side].sum(0).tolist()
        whole = [labels[p] for p, c in enumerate(counts) if c == n]
        some = {labels[p]: c for p, c in enumerate(counts) if 0 < c < n}
        if not whole and not some:
            continue
        tag = side.upper()
        start = b0 + (off if side == "a" else 0)
        first = start + int(zero[side].any(1).nonzero()[0, 0])
        details[side] = {"all_zero": whole, "zero_rows": some, "first_row": first}
        if whole:
            notes.append(f"{tag}'s {', '.join(whole)} {'is' if len(whole) == 1 else 'are'} zero on every "
                         f"compared row ({n}): no states were written there (a capture hook that never fired, "
                         "a buffer never filled?)")
        if some:
            notes.append(f"{tag}'s " + ", ".join(f"{lab} is zero on {c} of {n} rows" for lab, c in some.items())
                         + f" (first {tag} row {first}): those rows hold no states and are left out")
        slot_labels = labels[:len(sample.slots)]
        whole_side |= bool(slot_labels) and all(lab in whole for lab in slot_labels)
    if notes:
        findings.add("zero_states", "error", "; ".join(notes) + "; cosines with a zero vector are undefined",
                     **details)
    return whole_side
