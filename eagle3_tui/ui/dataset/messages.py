"""What the dataset view (ui/dataset/screen.py) is told and tells: the messages its pipeline
worker posts to it, those it posts to the main screen (ShowSample, FileAction, ScanMarksWanted),
and the text of the layers' lines under the findings."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.message import Message

from eagle3_tui.engines.results.findings import Finding
from eagle3_tui.target import Target

if TYPE_CHECKING:  # only named in annotations: dataset/shapes.py stays off the first frame
    from eagle3_tui.dataset.shapes import LayersEntry


@dataclass
class ScanOutcome(Message):
    generation: int
    #: "done", "cancelled" or "failed"
    outcome: str
    error: str | None = None


@dataclass
class FindingsReady(Message):
    generation: int
    findings: list[Finding]


@dataclass
class LayersReady(Message):
    """The layers step ended: `entries` and `extra` as dataset/layers.py's report gives them."""

    generation: int
    entries: list[LayersEntry]
    extra: list[Finding]
    planned: int
    interrupted: bool = field(default=False, kw_only=True)
    error: str | None = field(default=None, kw_only=True)


# posted to the main screen through the `post` callable the view is opened with

@dataclass
class ShowSample(Message):
    """The dataset view asks the main screen to show a sample: open `folder` (a Target) with the
    cursor on `name`, as a bookmark jump does."""

    folder: Target
    name: str


@dataclass
class FileAction(Message):
    """The dataset view asks the main screen to bookmark (`what` = "bookmark") or pin for compare
    ("pin") the file `path` of the open source; the answer goes back through `reply` as a
    StatusMessage."""

    what: str
    path: str
    reply: Callable[[Message], object]


@dataclass
class ScanMarksWanted(Message):
    """A dataset scan wrote records: the browser's ok/warning/error marks of the open folder are due."""


def layers_tail(entries: list[LayersEntry], model: str, planned: int | None,
                error: str | None, findings: Iterable[Finding] = ()) -> list[tuple[str, str]]:
    """The lines the layers step adds under the findings, as (kind, text). `findings`: the
    dataset's, whose layers_checked says how many other files were identified as a check."""
    # lazy: the main screen imports this module; dataset/layers.py (~5 ms) is not for the first frame
    from eagle3_tui.dataset.layers import checked_count, group_lines, layers_head

    done = planned is None and error is None and entries
    lines = [("head", layers_head(entries, model, planned, checked_count(findings) if done else 0))]
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


def layers_lines(message: LayersReady, model: str, findings: Iterable[Finding]) -> list[tuple[str, str]]:
    """layers_tail of the step that ended (`message`): an interrupted or failed step says so."""
    planned = message.planned if message.interrupted or message.error else None
    return layers_tail(message.entries, model, planned, message.error, findings)


def model_hint(model_given: str | None, model: str | None, records: Iterable[Any]) -> list[tuple[str, str]]:
    """The findings' tail when no layers step runs: why the layers are not named."""
    if model_given and model is None:
        return [("note", f"--model {model_given} is not on the data's machine: layers not named")]
    if model is None:  # no layers to name where no file is a readable sample
        return [("note", "start with --model DIR to name the layers")] if any(
            r.get("slots") for r in records) else []
    return []
