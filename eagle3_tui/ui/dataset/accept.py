"""The dataset view's acceptance step (--drafter): after the findings, the pipeline scores a few
files per group with the drafter (dataset/acceptance.py, as `scan --accept`), in the scan's
worker; here its progress becomes the findings' tail and the status line, its result the table's
sortable top-1 column (the files scored) and one line per group with what the group costs
against the majority. esc stops it (the pipeline's cancel), as it stops the layers step."""

from __future__ import annotations

from typing import Any

from eagle3_tui.dataset import pipeline as pl


def step_event(screen: Any, event: pl.StepProgress | pl.Acceptance) -> None:
    """A pipeline event of the steps after the findings: the layers' progress, or this step's."""
    if isinstance(event, pl.Acceptance):
        ready(screen, event)
    elif event.step == "layers":
        screen._show_identifying(event.done, event.total, event.path)
    else:
        progress(screen, event)


def progress(screen: Any, event: pl.StepProgress) -> None:
    screen.accept_state = "scoring"
    text = f"scoring acceptance {event.done}/{event.total}: {event.path}…"
    screen.findings_list.show_tail([*_layers_lines(screen), ("note", text)])
    screen.set_status(f"{text} (esc stops)")


def ready(screen: Any, event: pl.Acceptance) -> None:
    from eagle3_tui.dataset.acceptance import format_acceptance

    screen.accept_state = "failed" if event.error else "cancelled" if event.interrupted else "done"
    screen.rows.set_top1(event.files)
    if event.extra:
        screen.add_findings(event.extra)
    screen.table.rows_changed()
    planned = event.planned if event.interrupted or event.error else None
    text = format_acceptance(event.entries, screen.drafter or "", planned).splitlines()
    lines = [("head", text[0]), *(("", line.strip()) for line in text[1:])]
    if event.error:
        lines.append(("note", f"--drafter: {event.error}"))
    screen.findings_list.show_tail([*_layers_lines(screen), *lines])
    if event.error:
        screen.set_status(f"--drafter: {event.error}", error=True)
    else:
        screen._say_findings()


def _layers_lines(screen: Any) -> list[tuple[str, str]]:
    """The layers step's lines, kept above the acceptance's (both run with --model and --drafter)."""
    from eagle3_tui.ui.dataset.messages import layers_tail

    if not screen.layer_entries:
        return []
    return layers_tail(screen.layer_entries, screen.model_given or screen.model or "", None, None)
