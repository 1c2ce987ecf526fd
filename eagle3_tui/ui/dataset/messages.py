"""What the dataset view (ui/dataset/screen.py) is told and tells: the messages its pipeline
worker posts, and the text of its progress line and of the layers' lines under the findings."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.message import Message

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

    def __init__(self, generation: int, entries: list[dict[str, Any]], extra: list[Finding],
                 planned: int, *, interrupted: bool = False, error: str | None = None) -> None:
        super().__init__()
        self.generation = generation
        self.entries, self.extra, self.planned = entries, extra, planned
        self.interrupted, self.error = interrupted, error


def progress_text(p: dict[str, Any], done: int, elapsed: float, cancelled: bool) -> str:
    """The line beside the progress bar: share, files, the bytes the scan read (counted by it,
    not the files' sizes: a quick scan reads ~0.5 MiB of a 64 MiB sample) and the time the rest
    takes at the rate of the files read this run (cached ones cost nothing)."""
    total = p.get("files_total", 0)
    listing = p.get("listing_done", False)
    secs = max(p.get("seconds") or elapsed, 1e-6)
    text = f" {done:,}/{total:,}{'' if listing else '+'} files"
    if listing and total:
        text = f" {100 * min(done, total) // total:3d}% ·" + text
    fresh = p.get("files_read") or 0
    if fresh:
        read = p.get("bytes_read") or 0
        text += f" · read {_mib(read)} ({_mib(read / fresh)} a file, {_mib(read / secs)}/s)"
        if listing:
            text += f" · ETA {duration(max(0, total - done) * secs / fresh)}"
    if cancelled:
        text += " · cancelled"
    return text


def _mib(n: float) -> str:
    return f"{n / 2**20:.2f} MiB" if n < 10 * 2**20 else f"{n / 2**20:,.0f} MiB"


def layers_tail(entries: list[dict[str, Any]], model: str, planned: int | None,
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


def duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def model_hint(model_given: str | None, model: str | None, records: Iterable[Any]) -> list[tuple[str, str]]:
    """The findings' tail when no layers step runs: why the layers are not named."""
    if model_given and model is None:
        return [("note", f"--model {model_given} is not on the data's machine: layers not named")]
    if model is None:  # no layers to name where no file is a readable sample
        return [("note", "start with --model DIR to name the layers")] if any(
            r.get("slots") for r in records) else []
    return []
