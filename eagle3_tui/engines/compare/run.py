"""Compare a training sample (A) with an inference capture (B): load both, align, measure, name
the mismatch. The three steps are three objects a Comparison owns, each with its own inputs and
result: the Aligner (align.py) gives the alignment, the Measurer (metrics.py) the Measures of the
aligned rows (measures.py), the Judge (judge.py) the findings; all read the Sides and add to one
FindingList (sides.py).

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

import threading
from typing import cast

from eagle3_tui.engines.compare.align import Aligner
from eagle3_tui.engines.compare.identified import IdentifiedSides
from eagle3_tui.engines.compare.judge import Judge
from eagle3_tui.engines.compare.measures import Measures
from eagle3_tui.engines.compare.metrics import Measurer, in_workers
from eagle3_tui.engines.compare.sides import FindingList, Sides
from eagle3_tui.engines.model.identify import identify_pair
from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.sample import Sample, SampleError, blank_ids
from eagle3_tui.engines.read.shapes import split_like
from eagle3_tui.engines.results.compare import ComparisonResult, SideHeader
from eagle3_tui.engines.results.errors import error_result
from eagle3_tui.engines.results.findings import sort_findings
from eagle3_tui.engines.results.identify import IdentifyPair


def compare_files(a_path: str, b_path: str, *, slots: int | None = None, hidden: int | None = None,
                  cancel: threading.Event | None = None, model: str | None = None,
                  device: str = "auto") -> ComparisonResult:
    """Comparison JSON object of two files. `slots`/`hidden` settle an ambiguous capture (B);
    without them, a bare B tensor is split by A's hidden size. A file that cannot be loaded
    gives {"a": {...}, "b": {...}, "error": "..."} with the failing side's {"path", "error"}.
    With `model` (a model folder here), both sides are identified against it first (see
    engines/model/identify.py identify_pair) and the findings name the exact boundaries."""
    sides: dict[str, SideHeader] = {}
    loaded: dict[str, Sample] = {}
    for key, path, kw in (("a", a_path, {}), ("b", b_path, {"slots": slots, "hidden": hidden})):
        try:
            loaded[key] = load_sample(path, **kw)
            sides[key] = {"path": path}
        except (SampleError, MemoryError) as err:
            # the same {"path", "error", ...} in the place of the side's header
            sides[key] = cast(SideHeader, error_result(path, err))
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
            identified: IdentifyPair | None = None) -> ComparisonResult:
    """Compare training sample `a` with inference capture `b` (see the module docstring).
    `identified`: both sides' slots identified against the target model (identify_pair)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    workers = torch.get_num_threads()

    def run() -> ComparisonResult:
        with torch.no_grad():
            return Comparison(a, b, cancel, workers, identified).run()

    if workers <= 1:
        return run()
    # everything outside the main pass is many small ops: one intra-op thread each is fastest
    # (see in_workers); the main pass spreads its chunks over `workers` plain threads
    out: list[ComparisonResult] = []
    in_workers(lambda _: out.append(run()), [0], workers=1, force_thread=True)
    return out[0]


class Comparison:
    """One comparison of A with B: the steps it owns, and the order they run in."""

    def __init__(self, a: Sample, b: Sample, cancel: threading.Event | None, workers: int = 1,
                 identified: IdentifyPair | None = None):
        self.findings = FindingList()
        #: {"a": brief, "b": brief, "explained"} from identify_pair, or None (no --model)
        self.identified = identified
        if (blank := blank_ids(b.ids)) is not None:  # all padding: they would line B up with A's
            b.ids = None
            self.findings.add("ids_uninformative", "info",
                              f"B: {blank}, which says nothing; aligned by hidden states instead")
        self.sides = Sides(a, b)
        self.aligner = Aligner(self.sides, self.findings)
        self.measurer = Measurer(self.sides, self.findings, workers=workers, cancel=cancel)
        self.judge = Judge(self.sides, self.findings, IdentifiedSides(identified))

    def run(self) -> ComparisonResult:
        s = self.sides
        alignment = self.aligner.align()
        result: ComparisonResult = {
            "a": _header(s.a), "b": _header(s.b), "alignment": alignment,
            "slots": [], "matrix": [], "final": None, "findings": self.findings.items,
            "rows": self.aligner.aligned_rows_ids(alignment),
        }
        self.judge.check_width()
        measures: Measures | None = None
        pad_rows = alignment["on_padding"]
        if s.same_h and alignment["length"] > 0:
            measures = self.measurer.measure(alignment)
            result["matrix"], result["slots"], pad_rows = measures.matrix_json, measures.slots, measures.pad_rows
            for side, (label, doubt) in measures.doubts.items():
                header = result["a"] if side == "a" else result["b"]
                header["final_norm"] = label
                header["assumptions"].append(doubt)
            if measures.final is not None:
                result["final"] = measures.final
            self.judge.judge(measures, alignment)
        else:
            self.judge.check_nothing_compared(alignment)
        self.judge.check_nonfinite(measures)
        self.judge.check_padding_flags(pad_rows)
        if self.identified is not None:
            result["identified"] = self.identified
            self.judge.identified.report(self.findings)
        sort_findings(self.findings.items)
        return result


def _header(s: Sample) -> SideHeader:
    return {
        "path": s.path, "schema": s.schema, "tokens": s.tokens, "valid_tokens": s.valid_len,
        "hidden": s.hidden, "k": len(s.slots), "dtype": s.dtype,
        "boundaries": [sl.boundary for sl in s.slots], "final": s.final is not None, "final_norm": s.final_norm,
        "ids": s.ids is not None, "loss_mask": s.loss_mask is not None, "assumptions": list(s.assumptions),
    }
