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
from typing import TYPE_CHECKING, TypedDict, cast

from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.results.accept import AcceptResult
from eagle3_tui.engines.results.compare import ComparisonResult
from eagle3_tui.engines.results.host import Runtime
from eagle3_tui.engines.results.identify import IdentifyOptions, IdentifyResult
from eagle3_tui.engines.results.live import LiveReport
from eagle3_tui.engines.results.scan import CapturePrint, ScanProgressItem, ScanRecord
from eagle3_tui.engines.results.summary import Summary
from eagle3_tui.engines.scan.options import DEFAULT_BUDGET, DEFAULT_ROWS

if TYPE_CHECKING:
    from typing import Unpack

_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple:
    """data_2 < data_10, rows_2000-4000 < rows_10000-12000; ties broken by the raw name.

    One flat tuple (text, number, text, ..., -1, name): the split alternates text and digits,
    so a position always holds the same type, and the -1 after the last text part sorts a
    shorter name first and keeps the raw-name tie-break from meeting a number. Flat tuples
    compare several times faster than nested ones, which matters for 20,000-entry folders.
    """
    parts: list = _DIGITS.split(name.casefold())
    parts[1::2] = map(int, parts[1::2])
    parts.append(-1)
    parts.append(name)
    return tuple(parts)


class EntryJson(TypedDict):
    """An Entry as `ls --json` writes it."""

    name: str
    kind: str
    size: int | None
    mtime: float | None


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # "dir" | "file" | "link" (dead link) | "other"
    size: int | None = None
    mtime: float | None = None

    def to_json(self) -> EntryJson:
        return {"name": self.name, "kind": self.kind, "size": self.size, "mtime": self.mtime}


class NaturalListing:
    """Keeps entries that arrive in pages sorted in natural order, directories first.

    Each page is keyed and sorted when it arrives (overlapping with the next page's transfer);
    the sorted runs are merged when `entries` is read, so list_all pays one merge at the end
    and a UI that reads after every page pays one merge per read.
    """

    def __init__(self) -> None:
        self._keys: list[tuple] = []
        self._entries: list[Entry] = []
        self._runs: list[list[tuple]] = []

    @staticmethod
    def key(entry: Entry) -> tuple:
        # flat, (kind, text, number, ..., -1, name), not (kind, natural_key): the same order,
        # and merging a 20,000-name listing compared nested tuples for ~40% of its time
        name = entry.name
        parts: list = [_DIRS_FIRST.get(entry.kind, 1), *_DIGITS.split(name.casefold())]
        parts[2::2] = map(int, parts[2::2])  # natural_key's parts, inlined: 20,000 calls a folder
        parts.append(-1)
        parts.append(name)
        return tuple(parts)

    def add(self, page: list[Entry]) -> None:
        if page:
            runs = self._runs
            runs.append(sorted(zip(map(self.key, page), page, strict=True), key=_first))
            # runs no longer than the one before them are merged into it now, while the next
            # page is on the wire (a binary counter: every entry is merged ~log2(pages)
            # times, as in one merge at the end), so `entries` merges a few runs, not one a page
            while len(runs) > 1 and len(runs[-2]) <= len(runs[-1]):
                last = runs.pop()
                runs[-1] += last
                runs[-1].sort(key=_first)  # two sorted runs: one timsort merge pass

    @property
    def entries(self) -> list[Entry]:
        if self._runs:
            self._merge()
        return self._entries

    def _merge(self) -> None:
        runs, self._runs = self._runs, []
        if len(runs) == 1 and (not self._keys or runs[0][0][0] > self._keys[-1]):
            self._keys.extend(map(_first, runs[0]))
            self._entries.extend(map(_second, runs[0]))
            return
        if len(runs) == 1 and len(runs[0]) <= 64:
            for k, entry in runs[0]:
                i = bisect.bisect_right(self._keys, k)
                self._keys.insert(i, k)
                self._entries.insert(i, entry)
            return
        both = list(zip(self._keys, self._entries, strict=False))
        for run in runs:
            both.extend(run)
        both.sort(key=_first)  # sorted runs: timsort merges them instead of sorting from scratch
        self._keys = list(map(_first, both))
        self._entries = list(map(_second, both))

    def __len__(self) -> int:
        return len(self._entries) + sum(map(len, self._runs))


_DIRS_FIRST = {"dir": 0}
_first = operator.itemgetter(0)
_second = operator.itemgetter(1)


class SourceError(Exception):
    """A problem reaching the data (connection, permission, missing path). One line for the user."""


class ConnectionLost(SourceError):
    """The connection went in the middle of a call. `gave_up`: reconnecting failed too (a caller
    that resumes, such as dataset/pipeline.py, stops there)."""

    gave_up = False


Progress = Callable[[int, int | None], None]  # (done, total or None)


class Source(ABC):
    """Where a target's bytes live. All methods are coroutines; none blocks the event loop."""

    #: shown to the user: "local" or "user@host"
    label: str = "local"
    #: None for the local machine
    host: str | None = None

    #: the one line saying this source's torch may not unpickle (engines/read/torch_gate.py),
    #: decided when it connects; None when it may
    pickle_problem: str | None = None

    @property
    def computed(self) -> str:
        """Where the numbers are computed: "local" or "remote" (the JSON's "computed"); an SSH
        box says which as its agent comes and goes."""
        return "local"

    @property
    def where(self) -> str:
        """The machine the files are read on, as the findings cache names it (dataset/stream.py
        cache_host): "local" here, "user@host[:port]" for an SSH box."""
        return self.host or "local"

    @property
    def parallel(self) -> int:
        """How many identify and accept calls the dataset pipeline keeps in flight (dataset/ahead.py):
        one, or one per model actor of a Ray cluster."""
        return 1

    def release(self) -> None:  # noqa: B027 - only a Ray cluster has something to let go of
        """The command is done with this source's shared compute (a scan's cluster) until it closes."""

    @property
    def runtime_known(self) -> bool:
        """Whether runtime() is known yet (an SSH box: once its agent's hello came, or it has none)."""
        return True

    def runtime(self) -> Runtime:
        """Which Python and torch compute this source's results: {"computed", "python",
        "executable", "torch", "pickles"} (summary --json, scan --json's summary, the TUI header)."""
        return cast(Runtime, torch_gate.runtime(self.computed))  # torch_gate's dict is that shape

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
        self, path: str, *, k: int = 5, slots: int | None = None, hidden: int | None = None,
        tokenizer: str | None = None, model: str | None = None,
    ) -> Summary:
        """The summary JSON object of `eagle3-tui summary --json`, with "computed" set; with
        `tokenizer` (a tokenizer.json or model folder on this source), the token text too; with
        `model` (a model folder on this source), each slot's "identified" boundary (the model
        runs there; a failure is summary["identify"]["error"], the summary stays).

        File problems come back as {"path", "error"}; connection problems raise SourceError.
        """

    @abstractmethod
    async def compare(
        self, a: str, b: str, *, slots: int | None = None, hidden: int | None = None,
        tokenizer: str | None = None, model: str | None = None,
    ) -> ComparisonResult:
        """The comparison JSON object of `eagle3-tui compare --json` (token text as for summarize;
        with `model`, both sides identified and the exact boundaries in the findings)."""

    async def identify(self, path: str, *, model: str, **options: Unpack[IdentifyOptions]) -> IdentifyResult:
        """The JSON object of `eagle3-tui identify --json`: the sample's slots matched against the
        boundaries of the model folder `model` (on the same machine). Options: drafter, tokens,
        device, ids_from, slots, hidden. Unusable input comes back as {"path", "model", "error"}."""
        raise SourceError(f"{self.label}: identify is not available for this source")

    async def accept(
        self, path: str, drafter: str, *, model: str | None = None, steps: int = 3, all_rows: bool = False,
        order: list[int] | None = None, ids_from: str | None = None,
    ) -> AcceptResult:
        """The acceptance JSON object of `eagle3-tui accept --json` (engines/model/accept.py), with
        "computed" set. The drafter (and model) folders are paths on the same machine as `path`,
        and so is `ids_from` (a sample whose ids an id-less `path` borrows).
        Unusable inputs come back as {"path", "drafter", "error"}."""
        raise NotImplementedError

    async def serve_live(self, root: str, *, model: str, drafter: str, engine: str, python: str | None = None,
                         accept: int = 0, timeout: float = 900.0,
                         progress: Callable[[str], None] = lambda _s: None) -> LiveReport:
        """serve-check --live's report (engines/live/check.py): `engine` run in `python` (its own
        environment's Python on the data's machine; None: the Python that computes there) on the
        first training prompts under `root`, with the drafter; {"engine", "error"} when it cannot.
        `progress` is called on the caller's event loop."""
        return {"engine": engine, "error": f"{self.label}: the engine cannot be run for this source"}

    async def check_folders(self, model: str | None, drafter: str | None) -> dict[str, str]:
        """What is wrong with a model and a drafter folder on this source's machine
        (engines/model/folder_check.py, no torch): "model" / "drafter" -> one line; {} when both
        are fine or when this source cannot tell (they are then checked when used)."""
        return {}

    async def pair_print(self, path: str, widths: list[int]) -> CapturePrint:
        """What pairing needs of a capture (engines/scan/pairprint.py capture_print): its ids
        and its rows projected for each of the dataset's `widths`; {"path", "error"} when the
        file cannot be used."""
        raise SourceError(f"{self.label}: pair is not available for this source")

    @abstractmethod
    def scan(
        self, path: str, *, full: bool = False, rows: int = DEFAULT_ROWS, budget: int = DEFAULT_BUDGET,
        workers: int | None = None,
        known: dict[str, tuple] | None = None, drafter: tuple[str, str | None] | None = None,
        vocab_mapping: str | None = None, pair: bool = False,
    ) -> AsyncIterator[ScanRecord | ScanProgressItem]:
        """Scan the dataset under folder `path` where it lives (engines/scan/records.py): yields records
        (with "computed"), cached stubs for `known` unchanged files, and {"progress": {...}}
        items; known: rel -> (size, mtime[, variant]) (engines/scan/records.py scan_tree). Closing the
        iterator stops the scan. A folder that cannot be read raises SourceError.
        drafter: (drafter folder, model folder or None) on that machine: records get the drafter's
        top-1 (engines/scan/agreement.py); a folder that is no usable drafter raises SourceError.
        `vocab_mapping` (a vocab_mapping.pt on the same machine) adds draft-vocabulary counts.
        budget: the bytes a quick scan reads of a sample at most (engines/scan/budget.py).
        pair: records carry the pairing print (engines/scan/pairprint.py; only `pair` asks).
        """

    async def read_head(self, path: str, limit: int) -> tuple[bytes, int]:
        """The first `limit` bytes of regular file `path` and its size (the text viewer;
        sources/text_head.py). Anything but a regular file raises SourceError, unopened."""
        raise SourceError(f"{self.label}: cannot read files as text here")

    async def list_all(self, path: str) -> list[Entry]:
        listing = NaturalListing()
        async for page in self.list_pages(path):
            listing.add(page)
        return listing.entries
