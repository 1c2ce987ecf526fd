"""What the dataset view (ui/dataset/screen.py) is told and tells: the messages its pipeline
worker posts, and the text of its progress line and of the layers' lines under the findings."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.message import Message

from eagle3_tui.dataset.shapes import LayersEntry
from eagle3_tui.engines.results import Finding


class ScanEnded(Message):
    def __init__(self, generation: int, outcome: str, error: str | None = None) -> None:
        super().__init__()
        self.generation = generation
        #: "done", "cancelled" or "failed"
        self.outcome = outcome
        self.error = error


class FindingsReady(Message):
    def __init__(self, generation: int, findings: list[Finding]) -> None:
        super().__init__()
        self.generation = generation
        self.findings = findings


class LayersReady(Message):
    """The layers step ended: `entries` and `extra` as dataset/layers.py's report gives them."""

    def __init__(self, generation: int, entries: list[LayersEntry], extra: list[Finding],
                 planned: int, *, interrupted: bool = False, error: str | None = None) -> None:
        super().__init__()
        self.generation = generation
        self.entries, self.extra, self.planned = entries, extra, planned
        self.interrupted, self.error = interrupted, error


def layers_tail(entries: list[LayersEntry], model: str, planned: int | None,
                error: str | None) -> list[tuple[str, str]]:
    """The lines the layers step adds under the findings, as (kind, text)."""
    from eagle3_tui.dataset.layers import group_lines, layers_head

    lines = [("head", layers_head(entries, model, planned))]
    for e in entries:
        parts = group_lines(e)
        lines.append(("", parts[0][1]))
        # the slots' numbers stay in `scan --model`'s report: the reading says what they mean
        more = [text for kind, text in parts[1:] if kind in ("reading", "drafter")]
        if more:
            lines.append(("note", "  " + "; ".join(more)))
    if error:
        lines.append(("note", f"identify stopped: {error}"))
    return lines
def model_hint(model_given: str | None, model: str | None, records: Iterable[Any]) -> list[tuple[str, str]]:
    """The findings' tail when no layers step runs: why the layers are not named."""
    if model_given and model is None:
        return [("note", f"--model {model_given} is not on the data's machine: layers not named")]
    if model is None:  # no layers to name where no file is a readable sample
        return [("note", "start with --model DIR to name the layers")] if any(
            r.get("slots") for r in records) else []
    return []
