"""Messages that workers post to the screens that own the state.

Workers only do I/O and post one of these; handlers decide what the user sees.
`generation` ties a message to the listing/connection it came from, so a late message of a
folder the user has already left is dropped instead of mixed in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message

from eagle3_tui.engines.results import Summary
from eagle3_tui.sources.base import Entry, Source
from eagle3_tui.target import Target

if TYPE_CHECKING:
    from eagle3_tui.bookmarks.store import BookmarkStore


class SourceReady(Message):
    def __init__(self, source: Source, target: Target, where: str, select: str | None = None) -> None:
        super().__init__()
        self.source = source
        #: what is open: the place (user, host, port) and the folder to show
        self.target = target
        #: "local" or "user@host"
        self.where = where
        #: a file name to put the cursor on (the target named a file, not a folder)
        self.select = select


class SourceFailed(Message):
    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message


class ListingPage(Message):
    """Everything listed so far, already in natural order (the worker merged the new pages).

    `keys[i]` is the sort key of `entries[i]`; both lists are new objects the UI may keep.
    """

    def __init__(self, generation: int, keys: list[tuple], entries: list[Entry]) -> None:
        super().__init__()
        self.generation = generation
        self.keys = keys
        self.entries = entries


class ListingDone(Message):
    def __init__(self, generation: int, error: str | None = None) -> None:
        super().__init__()
        self.generation = generation
        self.error = error


class ShardsFound(Message):
    """n/p past the end of a shard folder: the nearest shard folder after (step 1) or before
    (step -1) `origin` that holds a sample, with its listing and the sample to select;
    `folder` is None when there is none. `skipped` names the shard folders without samples."""

    def __init__(self, origin: str, step: int, skipped: list[str], folder: str | None = None,
                 keys: list[tuple] | None = None, entries: list[Entry] | None = None,
                 select: str | None = None, error: str | None = None) -> None:
        super().__init__()
        self.origin = origin
        self.step = step
        self.skipped = skipped
        self.folder = folder
        self.keys = keys or []
        self.entries = entries or []
        self.select = select
        self.error = error


class SummaryLoaded(Message):
    def __init__(self, path: str, k: int, summary: Summary) -> None:
        super().__init__()
        self.path = path
        self.k = k
        self.summary = summary


class PinsSwapped(Message):
    """The compare view swapped its sides: `a` is now the training side, `b` the inference one.
    Posted by the compare screen; it bubbles to the app, which tells the main screen."""

    def __init__(self, a: str, b: str) -> None:
        super().__init__()
        self.a = a
        self.b = b


class StatusMessage(Message):
    """Something for the status line of the screen it is posted to."""

    def __init__(self, text: str, *, error: bool = False) -> None:
        super().__init__()
        self.text = text
        self.error = error


class StoreOpened(Message):
    """The bookmark store opened in a worker thread (`store` is a BookmarkStore)."""

    def __init__(self, store: BookmarkStore) -> None:
        super().__init__()
        self.store = store


class MarksChanged(Message):
    """Which names of the open folder are bookmarked changed: the browser redraws its marks."""


class BookmarkJump(Message):
    """Show a bookmarked sample: open `folder` (a Target: its place and folder path) with the
    cursor on `name`, connecting to its host when the screen has another place open."""

    def __init__(self, folder: Target, name: str) -> None:
        super().__init__()
        self.folder = folder
        self.name = name


class ShowSample(Message):
    """The dataset view asks the main screen to show a sample: open `folder` (a Target) with the
    cursor on `name`, as a bookmark jump does."""

    def __init__(self, folder: Target, name: str) -> None:
        super().__init__()
        self.folder = folder
        self.name = name


class FileAction(Message):
    """The dataset view asks the main screen to bookmark (`what` = "bookmark") or pin for compare
    ("pin") the file `path` of the open source; the answer goes back through `reply` as a
    StatusMessage."""

    def __init__(self, what: str, path: str, reply: Callable[[Message], object]) -> None:
        super().__init__()
        self.what = what
        self.path = path
        self.reply = reply


class ScanMarksWanted(Message):
    """A dataset scan wrote records: the browser's ok/warning/error marks of the open folder are due."""


class ScanMarksLoaded(Message):
    """The scan marks of the folder listed as `generation` (name -> ok / warning / error)."""

    def __init__(self, generation: int, marks: dict[str, str]) -> None:
        super().__init__()
        self.generation = generation
        self.marks = marks
