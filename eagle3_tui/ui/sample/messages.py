"""What the sample pane's worker (ui/sample/pane.py) posts to the pane."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from eagle3_tui.engines.results.summary import Summary


@dataclass
class SummaryLoaded(Message):
    path: str
    k: int
    summary: Summary
