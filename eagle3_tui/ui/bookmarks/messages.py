"""What the bookmarks' controller (ui/bookmarks/bookmarking.py) posts to the main screen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from eagle3_tui.target import Target

if TYPE_CHECKING:
    from eagle3_tui.bookmarks.store import BookmarkStore


@dataclass
class StoreOpened(Message):
    """The bookmark store opened in a worker thread (`store` is a BookmarkStore)."""

    store: BookmarkStore


@dataclass
class MarksChanged(Message):
    """Which names of the open folder are bookmarked changed: the browser redraws its marks."""


@dataclass
class BookmarkJump(Message):
    """Show a bookmarked sample: open `folder` (a Target: its place and folder path) with the
    cursor on `name`, connecting to its host when the screen has another place open."""

    folder: Target
    name: str
