"""compare --model: both sides' slots as the target model identified them (identify_pair), said
in the findings: the exact boundaries each B and A slot holds, and where they were identified.

Runs on the remote box too (shipped by the agent): the standard library only.
"""

from __future__ import annotations

from typing import Any, cast

from eagle3_tui.engines.compare.faults import report_faults
from eagle3_tui.engines.compare.sides import FindingList
from eagle3_tui.engines.results import IdentifyPair


class IdentifiedSides:
    """{"a": brief, "b": brief, "explained", "model", ...} from identify_pair, or None (no --model)."""

    def __init__(self, identified: IdentifyPair | None):
        # read by key, side by side ("a"/"b" from a loop), as the agent's JSON reads
        self.identified = cast("dict[str, Any] | None", identified)

    def boundaries(self) -> tuple[list[int | None], list[int | None]] | None:
        """(A's, B's) per-slot boundaries identified against the target model (the final norm's
        output as L + 1), or None without a model or when either side could not be identified."""
        ident = self.identified or {}
        sides = [ident.get(k) or {} for k in ("a", "b")]
        if "error" in ident or any("error" in side or "slots" not in side for side in sides):
            return None
        post = (sides[0].get("layers") or 0) + 1
        a_b, b_b = ([post if x.get("norm") == "post" else x.get("boundary") for x in side["slots"]]
                    for side in sides)
        return a_b, b_b

    def details(self) -> dict[str, Any]:
        """{"identified": {"a": [...], "b": [...]}} beside a finding's details, or {} (not identified)."""
        got = self.boundaries()
        return {} if got is None else {"identified": {"a": got[0], "b": got[1]}}

    def said_exactly(self) -> str:
        """": B slot 0 is b = 3, A slot 0 is b = 2: every B slot one boundary deeper: <why>", or ""
        without identified boundaries."""
        got = self.boundaries()
        ident = self.identified or {}
        if got is None:
            return ""
        a_b, b_b = got
        post = (ident["a"].get("layers") or 0) + 1

        def b(x: int | None) -> str:
            return "none" if x is None else "post-norm" if x == post else str(x)

        pairs = list(zip(a_b, b_b))
        diffs = {y - x for x, y in pairs if x is not None and y is not None}
        if len(pairs) == len(a_b) == len(b_b) and None not in a_b + b_b and len(diffs) == 1 and 0 not in diffs:
            d = diffs.pop()
            n = "one boundary" if abs(d) == 1 else f"{abs(d)} boundaries"
            text = (f": B slot 0 is b = {b(b_b[0])}, A slot 0 is b = {b(a_b[0])}: every B slot {n} "
                    + ("deeper" if d > 0 else "shallower"))
        else:
            listed = [f"B slot {j} is b = {b(y)}, A slot {j} is b = {b(x)}" for j, (x, y) in enumerate(pairs) if x != y]
            listed += [f"B slot {j} is b = {b(y)}" for j, y in enumerate(b_b[len(pairs):], len(pairs))]
            text = (": " + ", ".join(listed)) if listed else ""
        explained = ident.get("explained")
        if explained and explained.get("message"):
            text += f": {explained['message']}"
        return text

    def report(self, findings: FindingList) -> None:
        """One finding that says where both sides were identified (or why they could not be), after
        the capture faults identify found on either side (faults.py)."""
        ident = self.identified or {}
        problems = [f"{k.upper()}: {ident[k]['error']}" for k in ("a", "b") if "error" in (ident.get(k) or {})]
        if "error" in ident or problems:
            findings.add("identify_failed", "warning",
                     f"--model {ident.get('model')}: " + (ident.get("error") or "; ".join(problems)) +
                     ": the boundaries are not identified", model=ident.get("model"))
            return
        got = self.boundaries()
        if got is None:
            return
        post = (ident["a"].get("layers") or 0) + 1

        def side(tag: str, bounds: list[int | None]) -> str:
            shown = ", ".join("?" if x is None else "post" if x == post else str(x) for x in bounds)
            conv = ident[tag.lower()].get("convention") or {}
            explained = ident.get("explained")
            if explained:  # the one id set that explains both sides names both readings
                conv = {"follows": explained[tag.lower()], "ids": explained["ids"], "ids_from": explained["ids_from"]}
            how = ""
            if conv.get("follows") in ("output", "input", "hf_hidden_states"):
                reading = {"output": "output of layer", "input": "input of layer",
                           "hf_hidden_states": "HF hidden_states[k]"}[conv["follows"]]
                how = f" ({conv.get('ids_from')} {conv.get('ids')} read as {reading})"
            elif conv.get("follows") == "mixed":
                how = " (a mix of readings)"
            return f"{tag} slots b {{{shown}}}{how}"

        report_faults(ident, findings.add)
        findings.add("slots_identified", "info",
                 f"identified against {ident.get('model')} (L = {post - 1}): {side('A', got[0])}, "
                 f"{side('B', got[1])}" + ("; B run on A's token ids" if ident.get("b_ids_from") == "a" else ""),
                 a=got[0], b=got[1])
