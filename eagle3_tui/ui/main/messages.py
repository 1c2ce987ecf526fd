"""What the main screen's connecting worker (ui/main/connecting.py) posts to the screen."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from eagle3_tui.sources.base import Source
from eagle3_tui.target import Target


@dataclass
class SourceReady(Message):
    source: Source
    #: what is open: the place (user, host, port) and the folder to show
    target: Target
    #: "local" or "user@host"
    where: str
    #: a file name to put the cursor on (the target named a file, not a folder)
    select: str | None = None


@dataclass
class SourceFailed(Message):
    message: str
