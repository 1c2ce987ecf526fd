"""What the main pass measured on the aligned rows (Measures), as every judgement reads it: the
per-row norms and cosines, the cross-slot matrix, the per-pair metrics; with the two questions
asked of them more than once (the compared rows of a pair, a constant norm ratio).

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eagle3_tui.engines.compare.thresholds import RATIO_CV, SCALE_TOL
from eagle3_tui.engines.results.compare import PairMetrics

if TYPE_CHECKING:
    import torch


@dataclass
class Measures:
    """What the main pass measured on the aligned rows, for the judge: the tensors over the span
    of B rows b_start..b_end-1 ([n, ...]), with `real` marking the rows on A's valid part."""

    #: (b_start, b_end, offset): B row t is A row t + offset
    span: tuple[int, int, int]
    #: [n] rows on A's valid part (a prefix of the span): only they count
    real: torch.Tensor
    #: [n, parts] L2 norm of every row of every part, per side
    norm_a: torch.Tensor
    norm_b: torch.Tensor
    #: {"a", "b"}: [n, parts] squared row norms (NaN/Inf rows stay so)
    sq_norms: dict[str, torch.Tensor]
    #: {"a", "b"}: [n, parts] all-zero rows among the real ones
    zero_rows: dict[str, torch.Tensor]
    #: [n, nb, na] cosine of every B part with every A part, per row
    cos: torch.Tensor
    #: [nb, na] mean over the real rows (finals included at the end when both have one)
    matrix: torch.Tensor
    #: the matrix as JSON: mean cosine of B slot j against A slot i
    matrix_json: list[list[float | None]]
    #: per slot pair (slots 0..min(ka, kb)-1)
    slots: list[PairMetrics] = field(default_factory=list)
    #: the final states' pair, when both sides have one
    final: PairMetrics | None = None
    #: (A's, B's) final-state label as checked against their own norms (both sides have a final)
    final_labels: tuple[str | None, str | None] | None = None
    #: side -> the "?" label and the reason, when a side's own norms contradict its format's label
    doubts: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    #: rows B holds as real tokens that land on A's padding (0 once they proved to be more capture)
    pad_rows: int = 0

    def aligned_rows(self, a_part: torch.Tensor, b_part: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The compared rows of one A part and one B part (aligned, within A's valid rows)."""
        b0, _b1, off = self.span
        n = int(self.real.sum())  # the rows on A's valid part are a prefix of the span
        return a_part[b0 + off:b0 + off + n], b_part[b0:b0 + n]

    def constant_factor(self, ib: int, ia: int) -> float | None:
        """The per-token norm ratio B/A when it is one constant other than 1, else None."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        ratio = self.norm_b[:, ib] / self.norm_a[:, ia]
        ratio = ratio[torch.isfinite(ratio) & self.real]
        if ratio.numel() == 0:
            return None
        med = float(ratio.median())
        if abs(med - 1.0) > SCALE_TOL and cv(ratio) < RATIO_CV:
            return med
        return None


def cv(x) -> float:
    if x.numel() < 2:
        return 0.0
    mean = float(x.mean())
    return float(x.std()) / mean if mean else float("inf")
