"""Compare a training sample (A) with an inference capture (B): load both, align, measure, name
the mismatch. The three steps live in align.py, metrics.py and findings.py, as parts of one
Comparison whose state (both samples, their parts, the alignment, the Gram matrices) they share.

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

import threading
from typing import Any

from eagle3_tui.engines.compare.align import Alignment
from eagle3_tui.engines.compare.findings import Judgement
from eagle3_tui.engines.compare.metrics import Measurement, in_workers
from eagle3_tui.engines.model.identify import identify_pair
from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.sample import Sample, SampleError, blank_ids
from eagle3_tui.engines.read.shapes import split_like
from eagle3_tui.engines.results import ComparisonResult, error_result, finding, sort_findings


def compare_files(a_path: str, b_path: str, *, slots: int | None = None, hidden: int | None = None,
                  cancel: threading.Event | None = None, model: str | None = None,
                  device: str = "auto") -> ComparisonResult:
    """Comparison JSON object of two files. `slots`/`hidden` settle an ambiguous capture (B);
    without them, a bare B tensor is split by A's hidden size. A file that cannot be loaded
    gives {"a": {...}, "b": {...}, "error": "..."} with the failing side's {"path", "error"}.
    With `model` (a model folder here), both sides are identified against it first (see
    engines/model/identify.py identify_pair) and the findings name the exact boundaries."""
    sides: dict[str, Any] = {}
    loaded: dict[str, Sample] = {}
    for key, path, kw in (("a", a_path, {}), ("b", b_path, {"slots": slots, "hidden": hidden})):
        try:
            loaded[key] = load_sample(path, **kw)
            sides[key] = {"path": path}
        except (SampleError, MemoryError) as err:
            sides[key] = error_result(path, err)
    if len(loaded) < 2:
        failed = [k for k in ("a", "b") if "error" in sides[k]]
        msg = "; ".join(f"{k.upper()} {sides[k]['path']}: {sides[k]['error']}" for k in failed)
        return {"a": sides["a"], "b": sides["b"], "error": msg}
    a, b = loaded["a"], loaded["b"]
    if slots is None and hidden is None:
        b = split_like(b, a)
    identified = None
    if model:
        identified = identify_pair(a, b, model, device=device, cancel=cancel)
    return compare(a, b, cancel=cancel, identified=identified)


def compare(a: Sample, b: Sample, *, cancel: threading.Event | None = None,
            identified: dict[str, Any] | None = None) -> ComparisonResult:
    """Compare training sample `a` with inference capture `b` (see the module docstring).
    `identified`: both sides' slots identified against the target model (identify_pair)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    workers = torch.get_num_threads()

    def run() -> dict[str, Any]:
        with torch.no_grad():
            return Comparison(a, b, cancel, workers, identified).run()

    if workers <= 1:
        return run()
    # everything outside the main pass is many small ops: one intra-op thread each is fastest
    # (see in_workers); the main pass spreads its chunks over `workers` plain threads
    out: list[dict[str, Any]] = []
    in_workers(lambda _: out.append(run()), [0], workers=1, force_thread=True)
    return out[0]


class Comparison(Alignment, Measurement, Judgement):
    """One comparison of A with B: the state the three parts share, and the order they run in."""

    def __init__(self, a: Sample, b: Sample, cancel, workers: int = 1, identified: dict[str, Any] | None = None):
        self.a, self.b, self.cancel, self.workers = a, b, cancel, workers
        #: {"a": brief, "b": brief, "explained"} from identify_pair, or None (no --model)
        self.identified = identified
        self.findings: list[dict[str, Any]] = []
        self.a_parts = [s.tensor for s in a.slots]
        self.b_parts = [s.tensor for s in b.slots]
        self.both_final = a.final is not None and b.final is not None
        if self.both_final:
            self.a_parts.append(a.final.tensor)
            self.b_parts.append(b.final.tensor)
        self.ka, self.kb = len(a.slots), len(b.slots)
        self.same_h = a.hidden == b.hidden and a.hidden > 0
        self.a_valid = a.valid_len
        if (blank := blank_ids(b.ids)) is not None:  # all padding: they would line B up with A's
            b.ids = None
            self.add("ids_uninformative", "info", f"B: {blank}, which says nothing; aligned by hidden states instead")

    def run(self) -> dict[str, Any]:
        alignment = self.align()
        result: dict[str, Any] = {
            "a": _header(self.a), "b": _header(self.b), "alignment": alignment,
            "slots": [], "matrix": [], "final": None, "findings": self.findings,
            "rows": self.aligned_rows_ids(alignment),
        }
        self.check_width()
        if self.same_h and alignment["length"] > 0:
            self.measure(alignment, result)
        else:
            self.check_nothing_compared(alignment)
        self.check_nonfinite()
        self.check_padding_flags()
        if self.identified is not None:
            result["identified"] = self.identified
            self.report_identified()
        sort_findings(self.findings)
        return result

    def check_nothing_compared(self, alignment: dict[str, Any]) -> None:
        """No row was compared: never a silent pass. Says why, unless a finding already does
        (a width that differs, ids that never line up)."""
        if not self.same_h or any(f["severity"] == "error" for f in self.findings):
            return
        if not self.b_valid:
            why = f"B holds no {'rows' if not self.b.tokens else 'rows but padding'}"
        elif not self.a_valid:
            why = f"A holds no valid rows (all {self.a.tokens} are padding: id 0, loss_mask 0)"
        else:
            why = "no row of B lines up with a valid row of A"
        self.add("nothing_compared", "error", f"nothing was compared: {why}", a_valid=self.a_valid,
                 b_valid=self.b_valid, length=alignment["length"])

    def add(self, code: str, severity: str, message: str, **details: Any) -> None:
        self.findings.append(finding(code, severity, message, **details))  # type: ignore[arg-type]


def _header(s: Sample) -> dict[str, Any]:
    return {
        "path": s.path, "schema": s.schema, "tokens": s.tokens, "valid_tokens": s.valid_len,
        "hidden": s.hidden, "k": len(s.slots), "dtype": s.dtype,
        "boundaries": [sl.boundary for sl in s.slots], "final": s.final is not None, "final_norm": s.final_norm,
        "ids": s.ids is not None, "loss_mask": s.loss_mask is not None, "assumptions": list(s.assumptions),
    }
