"""A file's mark (✓ ok, ! warning, ✗ error), one rule for the browser and the dataset view:
the file on its own (status_of), raised by every warning or error finding over its folder that
names it (a slot count or a norm scale that differs from the rest is only seen among the others).

No Textual, no torch: the browser computes its marks in a worker thread from the record cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from eagle3_tui.engines.finding_codes import CODES

if TYPE_CHECKING:
    from eagle3_tui.dataset.shapes import DatasetRecord, LayerRuns
    from eagle3_tui.engines.results.findings import Finding

STATUS_RANK = {"error": 0, "warning": 1, "ok": 2, None: 3}


def status_of(r: Any) -> str | None:
    """One file on its own: "error" (unreadable, NaN/Inf), "warning" (trains nothing, padding
    trained), "ok", or None (not a sample)."""
    if r.get("not_sample"):
        return None
    if "error" in r:
        return "error"
    parts = [*r["slots"], *([r["final"]] if r.get("final") else [])]
    if any(p["nan"] or p["inf"] for p in parts):
        return "error"
    if r.get("loss_ones") == 0 or (r.get("masked_zero_tail") or 0) >= 2:
        return "warning"
    return "ok"


def finding_paths(finding: Finding) -> list[str]:
    """The files a finding names (its paths, or every file of its groups)."""
    if finding.get("paths"):
        return list(finding["paths"])
    return [p for group in finding.get("groups") or () for p in group]


def marked_paths(finding: Finding) -> list[str]:
    """The files a finding marks: those it names, unless they are only examples of a dataset-wide
    figure (the draft vocabulary's coverage names the files most outside it; they are not broken)."""
    code = CODES.get(finding["code"])
    return [] if code is not None and not code.marks_files else finding_paths(finding)


def raised(status: str | None, severities: Iterable[str]) -> str | None:
    """`status` raised to the worst of the severities of the findings naming the file."""
    for sev in severities:
        if sev in ("error", "warning") and STATUS_RANK[sev] < STATUS_RANK[status]:
            status = sev
    return status


def file_marks(records: Iterable[Any], findings: list[Finding]) -> dict[str, str]:
    """path -> "ok" | "warning" | "error" for every sample among `records` (by their "path")."""
    named: dict[str, list[str]] = {}
    for f in findings:
        for p in marked_paths(f):
            named.setdefault(p, []).append(f["severity"])
    marks = {}
    for r in records:
        status = raised(status_of(r), named.get(r.get("path"), ()))
        if status is not None:
            marks[r.get("path")] = status
    return marks


def _no_layer_search(values: list[list[float]], shard_of: list[int]) -> LayerRuns:
    """The browser does not run layer_group's permutation test (torch, seconds): the dataset
    view's findings, when it scanned this folder, carry it."""
    return {"runs": [], "rest": len(values)}


def folder_marks(records: list[DatasetRecord], findings: list[Finding] | None) -> dict[str, str]:
    """The marks of a folder's records: with the findings of the dataset view's scan of the folder
    when the cache has them, else with the findings computed here over these records."""
    if findings is None:
        # lazy: the findings bring the whole scan engine in (~40 ms), which the browser's first
        # frame does not need: it imports this module for status_of
        from eagle3_tui.dataset.findings import dataset_findings

        findings = dataset_findings(records, layer_runs=_no_layer_search)
    return file_marks(records, findings)
