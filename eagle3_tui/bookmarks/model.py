"""What a bookmark is, and the errors bookmarks raise (standard library only)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TypedDict

from eagle3_tui.bookmarks.headline import Headline, headline_text

_TAG_FORBIDDEN = set(" \t\r\n\v\f,;#")


class BookmarkError(Exception):
    """Anything the user must be told about bookmarks. str() is one line."""


class BookmarkStoreRefused(BookmarkError):
    """The database file is damaged, foreign or newer; it was left exactly as it was."""


class BookmarkJson(TypedDict):
    """A bookmark as `bookmarks --json` and the export write it."""

    target: str
    host: str | None
    user: str | None
    port: int | None
    path: str
    note: str
    tags: list[str]
    created: str  # ISO 8601
    updated: str
    headline: Headline | None


@dataclass(frozen=True)
class Bookmark:
    target: str
    host: str | None
    user: str | None
    port: int | None
    path: str
    note: str = ""
    tags: tuple[str, ...] = ()
    created: float = 0.0
    updated: float = 0.0
    headline: Headline | None = field(default=None, compare=False, hash=False)

    @property
    def headline_text(self) -> str:
        return headline_text(self.headline)

    def to_json(self) -> BookmarkJson:
        return {
            "target": self.target,
            "host": self.host,
            "user": self.user,
            "port": self.port,
            "path": self.path,
            "note": self.note,
            "tags": list(self.tags),
            "created": iso_time(self.created),
            "updated": iso_time(self.updated),
            "headline": self.headline,
        }

    def matches(self, filter_text: str | None) -> bool:
        """Every word of filter_text occurs (case-insensitive) in target, note, #tags or headline."""
        if not filter_text:
            return True
        hay = " ".join(
            [self.target, self.note, " ".join("#" + t for t in self.tags), self.headline_text]
        ).casefold()
        return all(word in hay for word in filter_text.casefold().split())


def iso_time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")


def clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags are single words (no spaces, commas, semicolons or #), kept in first-seen order."""
    out: list[str] = []
    for tag in tags:
        tag = str(tag).strip()
        if not tag:
            continue
        if set(tag) & _TAG_FORBIDDEN:
            raise BookmarkError(f"bad tag {tag!r}: a tag is one word without spaces, ',', ';' or '#'")
        if tag not in out:
            out.append(tag)
    return tuple(out)
