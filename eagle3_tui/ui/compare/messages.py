"""What the compare view (ui/compare/screen.py) posts: it bubbles to the app."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class PinsSwapped(Message):
    """The compare view swapped its sides: `a` is now A (the file B was), `b` is B.
    Posted by the compare screen; it bubbles to the app, which tells the main screen."""

    a: str
    b: str
