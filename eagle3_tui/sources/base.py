"""The Source interface shared by the CLI and the UI, and natural ordering of names.

A Source lists folders as a stream of pages (in arrival order; NaturalListing merges them
into natural order), stats paths, and runs summarise/compare next to the data.
"""

from __future__ import annotations

import bisect
import operator
import re
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple:
    """data_2 < data_10, rows_2000-4000 < rows_10000-12000; ties broken by the raw name.

    The split alternates text and digits, so position i always holds the same type: a flat
    tuple compares str with str and int with int, several times faster than nested tuples.
    """
    parts: list = _DIGITS.split(name)
    parts[0::2] = map(str.casefold, parts[0::2])
    parts[1::2] = map(int, parts[1::2])
    return (tuple(parts), name)


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # "dir" | "file" | "link" (dead link) | "other"
    size: int | None = None
    mtime: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "size": self.size, "mtime": self.mtime}


class NaturalListing:
    """Keeps entries that arrive in pages sorted in natural order, directories first.

    Pages are merged when `entries` is read, so a caller that reads once after the last page
    (list_all) pays one sort, and a UI that reads after every page pays one merge per read.
    """

    def __init__(self) -> None:
        self._keys: list[tuple] = []
        self._entries: list[Entry] = []
        self._pending: list[list[Entry]] = []

    @staticmethod
    def key(entry: Entry) -> tuple:
        return (0 if entry.kind == "dir" else 1, natural_key(entry.name))

    def add(self, page: list[Entry]) -> None:
        if page:
            self._pending.append(page)

    @property
    def entries(self) -> list[Entry]:
        if self._pending:
            self._merge()
        return self._entries

    def _merge(self) -> None:
        new = [entry for page in self._pending for entry in page]
        self._pending = []
        pairs = sorted(zip(map(self.key, new), new), key=_first)
        if not self._keys or pairs[0][0] > self._keys[-1]:
            self._keys.extend(map(_first, pairs))
            self._entries.extend(map(_second, pairs))
        elif len(pairs) <= 64:
            for k, entry in pairs:
                i = bisect.bisect_right(self._keys, k)
                self._keys.insert(i, k)
                self._entries.insert(i, entry)
        else:
            both = list(zip(self._keys, self._entries))
            both.extend(pairs)
            both.sort(key=_first)  # two sorted runs: timsort merges them in one pass
            self._keys = list(map(_first, both))
            self._entries = list(map(_second, both))

    def __len__(self) -> int:
        return len(self._entries) + sum(map(len, self._pending))


_first = operator.itemgetter(0)
_second = operator.itemgetter(1)


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
