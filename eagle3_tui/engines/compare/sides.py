"""What every step of a comparison reads: both samples and the parts they compare (Sides), and
the findings the steps add to, in the order they find them (FindingList).

Runs on the remote box too (shipped by the agent): the standard library only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eagle3_tui.engines.read.sample import Sample
from eagle3_tui.engines.results.findings import Finding, Severity, finding

if TYPE_CHECKING:
    import torch


class Sides:
    """Training sample A and inference capture B, with their parts in compare order (the slots,
    then the final state when both sides have one) and the counts every step needs."""

    def __init__(self, a: Sample, b: Sample):
        self.a, self.b = a, b
        self.a_parts: list[torch.Tensor] = [s.tensor for s in a.slots]
        self.b_parts: list[torch.Tensor] = [s.tensor for s in b.slots]
        self.both_final = a.final is not None and b.final is not None
        if a.final is not None and b.final is not None:
            self.a_parts.append(a.final.tensor)
            self.b_parts.append(b.final.tensor)
        self.ka, self.kb = len(a.slots), len(b.slots)
        self.same_h = a.hidden == b.hidden and a.hidden > 0
        self.a_valid = a.valid_len
        # B's own padding (SpecForge pads B too when it is a rerun of the batch) is not a token
        self.b_valid = b.valid_len


class FindingList:
    """The findings of one comparison, in the order the steps add them (sorted at the end)."""

    def __init__(self) -> None:
        self.items: list[Finding] = []

    def add(self, code: str, severity: Severity, message: str, **details: Any) -> None:
        self.items.append(finding(code, severity, message, **details))

    def any_error(self) -> bool:
        return any(f["severity"] == "error" for f in self.items)
