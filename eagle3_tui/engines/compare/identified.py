"""compare --model: both sides' slots as the target model identified them (identify_pair), said
in the findings: the exact boundaries each B and A slot holds, and where they were identified.

Runs on the remote box too (shipped by the agent): the standard library only.
"""

from __future__ import annotations

from typing import TypedDict

from eagle3_tui.engines.compare.faults import report_faults
from eagle3_tui.engines.compare.sides import FindingList
from eagle3_tui.engines.results.identify import IdentifyBrief, IdentifyPair


class SlotBoundaries(TypedDict):
    """Both sides' per-slot boundaries as the target model identified them."""

    a: list[int | None]
    b: list[int | None]


class IdentifiedDetails(TypedDict, total=False):
    """What IdentifiedSides.details adds to a finding's details: nothing without identified boundaries."""

    identified: SlotBoundaries


class IdentifiedSides:
    """{"a": brief, "b": brief, "explained", "model", ...} from identify_pair, or None (no --model)."""

    def __init__(self, identified: IdentifyPair | None):
        self.identified: IdentifyPair = identified or {}
        #: A's and B's briefs ({} when the pair has none)
        self.a: IdentifyBrief = self.identified.get("a") or {}
        self.b: IdentifyBrief = self.identified.get("b") or {}

    def boundaries(self) -> tuple[list[int | None], list[int | None]] | None:
        """(A's, B's) per-slot boundaries identified against the target model (the final norm's
        output as L + 1), or None without a model or when either side could not be identified."""
        sides = (self.a, self.b)
        if "error" in self.identified or any("error" in side or "slots" not in side for side in sides):
            return None
        post = (self.a.get("layers") or 0) + 1
        a_b, b_b = ([post if x.get("norm") == "post" else x.get("boundary") for x in side["slots"]]
                    for side in sides)
        return a_b, b_b

    def details(self) -> IdentifiedDetails:
        """{"identified": {"a": [...], "b": [...]}} beside a finding's details, or {} (not identified)."""
        got = self.boundaries()
        return {} if got is None else {"identified": {"a": got[0], "b": got[1]}}

    def said_exactly(self) -> str:
        """": B slot 0 is b = 3, A slot 0 is b = 2: every B slot one boundary deeper: <why>", or ""
        without identified boundaries."""
        got = self.boundaries()
        ident = self.identified
        if got is None:
            return ""
        a_b, b_b = got
        post = (self.a.get("layers") or 0) + 1

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
        ident = self.identified
        problems = [f"{tag}: {side['error']}" for tag, side in (("A", self.a), ("B", self.b)) if "error" in side]
        if "error" in ident or problems:
            findings.add("identify_failed", "warning",
                     f"--model {ident.get('model')}: " + (ident.get("error") or "; ".join(problems)) +
                     ": the boundaries are not identified", model=ident.get("model"))
            return
        got = self.boundaries()
        if got is None:
            return
        post = (self.a.get("layers") or 0) + 1

        def side(tag: str, brief: IdentifyBrief, bounds: list[int | None]) -> str:
            shown = ", ".join("?" if x is None else "post" if x == post else str(x) for x in bounds)
            conv = brief.get("convention")
            follows, ids, ids_from = (conv["follows"], conv["ids"], conv["ids_from"]) if conv else (None, None, None)
            explained = ident.get("explained")
            if explained:  # the one id set that explains both sides names both readings
                follows = explained["a"] if tag == "A" else explained["b"]
                ids, ids_from = explained["ids"], explained["ids_from"]
            how = ""
            if follows in ("output", "input", "hf_hidden_states"):
                reading = {"output": "output of layer", "input": "input of layer",
                           "hf_hidden_states": "HF hidden_states[k]"}[follows]
                how = f" ({ids_from} {ids} read as {reading})"
            elif follows == "mixed":
                how = " (a mix of readings)"
            return f"{tag} slots b {{{shown}}}{how}"

        report_faults(ident, findings.add)
        findings.add("slots_identified", "info",
                 f"identified against {ident.get('model')} (L = {post - 1}): {side('A', self.a, got[0])}, "
                 f"{side('B', self.b, got[1])}" + ("; B run on A's token ids" if ident.get("b_ids_from") == "a" else ""),
                 a=got[0], b=got[1])
