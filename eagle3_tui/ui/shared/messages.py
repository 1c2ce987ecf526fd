"""The one message several features post: a line for the status bar of the screen it reaches.

Each feature's other messages sit beside the code that posts them (main/, browser/, sample/,
compare/, bookmarks/, dataset/ messages.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message


@dataclass
class StatusMessage(Message):
    """Something for the status line of the screen it is posted to."""

    text: str
    error: bool = field(default=False, kw_only=True)
