"""The dataset view's acceptance step (--drafter): after the findings, the pipeline scores a few
files per group with the drafter (dataset/acceptance.py, as `scan --accept`), in the scan's
worker; here its progress becomes the findings' tail and the status line, its result the table's
sortable top-1 column (the files scored) and one line per group with what the group costs
against the majority. esc stops it (the pipeline's cancel), as it stops the layers step."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from eagle3_tui.dataset import pipeline as pl
from eagle3_tui.dataset.acceptance import format_acceptance
from eagle3_tui.ui.dataset.messages import layers_tail

if TYPE_CHECKING:
    from eagle3_tui.dataset.shapes import LayersEntry
    from eagle3_tui.engines.results.findings import Finding
    from eagle3_tui.ui.dataset.findings import DatasetFindings
    from eagle3_tui.ui.dataset.model import DatasetRows
    from eagle3_tui.ui.dataset.table import DatasetTable


class AcceptView(Protocol):
    """What this step shows through in the dataset view."""

    #: None (not run), "scoring", "done", "cancelled", "failed"
    accept_state: str | None
    rows: DatasetRows
    drafter: str | None
    model: str | None
    model_given: str | None
    layer_entries: list[LayersEntry]
    findings: list[Finding]

    @property
    def findings_list(self) -> DatasetFindings: ...

    @property
    def table(self) -> DatasetTable: ...

    def add_findings(self, extra: list[Finding]) -> None: ...

    def show_identifying(self, i: int, n: int, path: str) -> None: ...

    def set_status(self, text: str, *, error: bool = False) -> None: ...


def step_event(view: AcceptView, event: pl.StepProgress | pl.Acceptance) -> None:
    """A pipeline event of the steps after the findings: the layers' progress, or this step's."""
    if isinstance(event, pl.Acceptance):
        ready(view, event)
    elif event.step == "layers":
        view.show_identifying(event.done, event.total, event.path)
    else:
        progress(view, event)


def progress(view: AcceptView, event: pl.StepProgress) -> None:
    view.accept_state = "scoring"
    text = f"scoring acceptance {event.done}/{event.total}: {event.path}…"
    view.findings_list.show_tail([*_layers_lines(view), ("note", text)])
    view.set_status(f"{text} (esc stops)")


def ready(view: AcceptView, event: pl.Acceptance) -> None:
    view.accept_state = "failed" if event.error else "cancelled" if event.interrupted else "done"
    view.rows.set_top1(event.files)
    if event.extra:
        view.add_findings(event.extra)
    view.table.rows_changed()
    planned = event.planned if event.interrupted or event.error else None
    text = format_acceptance(event.entries, view.drafter or "", planned).splitlines()
    lines = [("head", text[0]), ("note", "  " + top1_legend(event, len(view.rows))),
             *(("", line.strip()) for line in text[1:])]
    if event.error:
        lines.append(("note", f"--drafter: {event.error}"))
    view.findings_list.show_tail([*_layers_lines(view), *lines])
    if event.error:
        view.set_status(f"--drafter: {event.error}", error=True)
    else:
        view.set_status(top1_legend(event, len(view.rows), short=True))


def top1_legend(event: pl.Acceptance, files: int, *, short: bool = False) -> str:
    """Why the top-1 column is "-" on most files: the step scores a few files of each group
    (dataset/acceptance.py choose_files: the representative and files spread along the group,
    a drafter pass each), not every file. short: the status line's words."""
    scored = sum(1 for r in event.files if r.get("top1") is not None)
    per = max((e["scored"] + len(e.get("errors", [])) for e in event.entries), default=0)
    groups = len(event.entries)
    if short:
        return f"top-1 on {scored} of {files:,} files ({per} per group, a drafter pass each); \"-\": not scored"
    each = f"its representative and {per - 1} spread along it" if per > 1 else "its representative"
    return (f"top-1 column: {scored} of {files:,} files scored, {per} per group ({each}; "
            f"{groups} group{'s' if groups != 1 else ''}; a drafter pass each); \"-\": not scored")


def _layers_lines(view: AcceptView) -> list[tuple[str, str]]:
    """The layers step's lines, kept above the acceptance's (both run with --model and --drafter)."""
    if not view.layer_entries:
        return []
    return layers_tail(view.layer_entries, view.model_given or view.model or "", None, None, view.findings)
