"""What the browser's workers post (ui/browser/listing_stream.py, folder_pane.py).

`generation` ties a message to the listing it came from, so a late message of a folder the user
has already left is dropped instead of mixed in."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from eagle3_tui.sources.base import Entry


@dataclass
class ListingPage(Message):
    """Everything listed so far, already in natural order (the worker merged the new pages).

    `keys[i]` is the sort key of `entries[i]`; both lists are new objects the UI may keep.
    """

    generation: int
    keys: list[tuple]
    entries: list[Entry]


@dataclass
class ListingDone(Message):
    generation: int
    error: str | None = None


@dataclass
class ShardsFound(Message):
    """n/p past the end of a shard folder: the nearest shard folder after (step 1) or before
    (step -1) `origin` that holds a sample, with its listing and the sample to select;
    `folder` is None when there is none. `skipped` names the shard folders without samples."""

    origin: str
    step: int
    skipped: list[str]
    folder: str | None = None
    keys: list[tuple] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    select: str | None = None
    error: str | None = None


@dataclass
class ScanMarksLoaded(Message):
    """The scan marks of the folder listed as `generation` (name -> ok / warning / error)."""

    generation: int
    marks: dict[str, str]
