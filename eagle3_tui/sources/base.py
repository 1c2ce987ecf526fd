"""The Source interface shared by the CLI and the UI, and natural ordering of names.

A Source lists folders as a stream of pages (in arrival order; NaturalListing merges them
into natural order), stats paths, and runs summarise/compare next to the data.
"""

from __future__ import annotations

import bisect
import re
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple:
    """data_2 < data_10, rows_2000-4000 < rows_10000-12000; ties broken by the raw name."""
    parts = _DIGITS.split(name)
    key = []
    for i, part in enumerate(parts):
        if i % 2:
            key.append((1, int(part), ""))
        else:
            key.append((0, 0, part.casefold()))
    return (tuple(key), name)


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # "dir" | "file" | "link" (dead link) | "other"
    size: int | None = None
    mtime: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "size": self.size, "mtime": self.mtime}


class NaturalListing:
    """Keeps entries that arrive in pages sorted in natural order, directories first."""

    def __init__(self) -> None:
        self._keys: list[tuple] = []
        self.entries: list[Entry] = []

    @staticmethod
    def key(entry: Entry) -> tuple:
        return (0 if entry.kind == "dir" else 1, natural_key(entry.name))

    def add(self, page: list[Entry]) -> None:
        if not page:
            return
        if len(page) > 64 or not self.entries:
            merged = sorted(zip(map(self.key, page), page), key=lambda kv: kv[0])
            if self._keys and merged[0][0] < self._keys[-1]:
                merged = sorted([*zip(self._keys, self.entries), *merged], key=lambda kv: kv[0])
                self._keys, self.entries = [k for k, _ in merged], [e for _, e in merged]
            else:
                self._keys.extend(k for k, _ in merged)
                self.entries.extend(e for _, e in merged)
            return
        for entry in page:
            k = self.key(entry)
            i = bisect.bisect_right(self._keys, k)
            self._keys.insert(i, k)
            self.entries.insert(i, entry)

    def __len__(self) -> int:
        return len(self.entries)


class SourceError(Exception):
    """A problem reaching the data (connection, permission, missing path). One line for the user."""


Progress = Callable[[int, int | None], None]  # (done, total or None)


class Source(ABC):
    """Where a target's bytes live. All methods are coroutines; none blocks the event loop."""

    #: shown to the user: "local" or "user@host"
    label: str = "local"
    #: None for the local machine
    host: str | None = None

    async def connect(self) -> None:  # noqa: B027 - local sources have nothing to do
        """Open the connection (no-op for local)."""

    async def close(self) -> None:  # noqa: B027
        """Release the connection (no-op for local)."""

    @abstractmethod
    def list_pages(self, path: str, page_size: int = 1000) -> AsyncIterator[list[Entry]]:
        """Yield the entries of folder `path` in pages, in arrival order."""

    @abstractmethod
    async def stat(self, path: str) -> Entry:
        """Entry for `path` (name is the base name). Raises SourceError if missing."""

    @abstractmethod
    async def summarize(
        self, path: str, *, k: int = 5, slots: int | None = None, hidden: int | None = None
    ) -> dict[str, Any]:
        """The summary JSON object of `eagle3-tui summary --json`, with "computed" set.

        File problems come back as {"path", "error"}; connection problems raise SourceError.
        """

    @abstractmethod
    async def compare(
        self, a: str, b: str, *, slots: int | None = None, hidden: int | None = None
    ) -> dict[str, Any]:
        """The comparison JSON object of `eagle3-tui compare --json`."""

    async def list_all(self, path: str) -> list[Entry]:
        listing = NaturalListing()
        async for page in self.list_pages(path):
            listing.add(page)
        return listing.entries
