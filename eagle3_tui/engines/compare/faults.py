"""compare --model: the capture faults identify found on either side (capture_faults.py), said
against the other side: "B slot 1 is A's b = 12 without the residual", "B is A one token late at
every slot".

Runs on the remote box too (shipped by the agent): the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable

from eagle3_tui.engines.model.capture_faults import common_lag, own_boundary, what_is_wrong
from eagle3_tui.engines.results.identify import IdentifiedBrief, IdentifyBrief, IdentifyPair


def report_faults(identified: IdentifyPair, add: Callable[..., None]) -> None:
    """One finding per faulty part (code capture_fault), or one for a side whose every part is
    shifted by the same rows (capture_lag)."""
    sides: dict[str, IdentifyBrief] = {"A": identified.get("a") or {}, "B": identified.get("b") or {}}
    if any("error" in side or "slots" not in side for side in sides.values()):
        return
    for tag, other in (("A", "B"), ("B", "A")):
        parts = _parts(sides[tag])
        faults = [p.get("fault") for _, p in parts]
        if not any(faults):
            continue
        shift = common_lag(faults)
        other_clean = not any(p.get("fault") for _, p in _parts(sides[other]))
        if shift is not None:  # every part is a lag: none without a fault
            who = f"{tag} is {other}" if other_clean else tag
            lags = [f for f in faults if f]
            add("capture_lag", "error",
                f"{who} {what_is_wrong(lags[0])} at every slot: each {tag} part matches its boundary "
                f"shifted by {shift:+d} rows (cosine {min(f['cosine'] for f in lags):.4f} or more); "
                "the capture's rows are off against its token ids", side=tag.lower(), shift=shift)
            continue
        other_parts = dict(_parts(sides[other]))
        for name, part in parts:
            fault = part.get("fault")
            if not fault:
                continue
            own = own_boundary(fault)
            mate: IdentifiedBrief = other_parts.get(name) or {}
            where = "the final state" if name == "final" else f"b = {own}"
            if mate.get("boundary") == own and own is not None or (name == "final" and mate.get("norm")):
                text = f"{tag} {_label(name)} is {other}'s {where} {what_is_wrong(fault)}"
            else:
                text = f"{tag} {_label(name)} is {where} {what_is_wrong(fault)}"
            add("capture_fault", "error", f"{text} (cosine {fault['cosine']:.4f}, within a capture's noise)",
                side=tag.lower(), slot=name, fault=fault)


def _parts(side: IdentifyBrief) -> list[tuple[int | str, IdentifiedBrief]]:
    """(slot index, or "final"; its brief) of each part of a side."""
    out: list[tuple[int | str, IdentifiedBrief]] = list(enumerate(side.get("slots") or []))
    if final := side.get("final"):
        out.append(("final", final))
    return out


def _label(name) -> str:
    return "final" if name == "final" else f"slot {name}"
