"""The dataset view's data: scan records kept compact, their order, filter and per-slot bins.

No Textual here: the widgets (ui/dataset/table.py, norm_strip.py) only draw what this
holds, and the screen (ui/dataset/screen.py) feeds it records as a scan streams them.

A scan record (engines/scan/records.py) decoded from JSON costs about 5 KB of Python objects; 100,000 of
them would be half a gigabyte. `Record` keeps the fields of the record's type (ScanRecord in
engines/results/scan.py; less the few only the CLI's report reads) in __slots__ (about 1.3 KB) and
still reads like the dict (r["k"], r.get("final"), "error" in r). The view's scan pipeline keeps
these rather than the dicts (`kept`, its `keep`), and its findings, layers and acceptance steps
read them as they are: one copy of each record, not two.
"""

from __future__ import annotations

import math
import sys
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from eagle3_tui.dataset.marks import STATUS_RANK, raised, status_of
from eagle3_tui.dataset.shapes import AcceptScore, DatasetRecord
from eagle3_tui.engines.results.scan import DraftVocabCounts, ScanRecord, ScanSignature, SlotRecord
from eagle3_tui.sources.base import natural_key


class _Fields:
    """Dict-like reading of __slots__ attributes (unset ones are missing keys)."""

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self.__slots__ and hasattr(self, key)

    def __bool__(self) -> bool:
        return True


class SlotStats(_Fields):
    __slots__ = tuple(SlotRecord.__annotations__)  # norm_mean, norm_max, nan, inf, first_nonfinite_row

    def __init__(self, d: SlotRecord) -> None:
        self.norm_mean = d.get("norm_mean")
        self.norm_bulk = d.get("norm_bulk")
        self.norm_max = d.get("norm_max")
        self.nan = d.get("nan") or 0
        self.inf = d.get("inf") or 0
        self.first_nonfinite_row = d.get("first_nonfinite_row")


class Signature(_Fields):
    __slots__ = ("cos_final", "cos_next", "rel_final")

    def __init__(self, d: ScanSignature) -> None:
        self.rel_final = tuple(d.get("rel_final") or ())
        self.cos_next = tuple(d.get("cos_next") or ())
        self.cos_final = d.get("cos_final")


_INTERNED = ("shard", "schema", "dtype", "mode", "final_norm", "computed", "error")
#: the scan record's fields the view does not keep (the CLI's report reads them)
#: pair: only `pair` reads it; lost: the record cache, before the view keeps the record
_NOT_KEPT = ("rows_read", "mapped", "accept", "pair", "lost")


class Record(_Fields):
    """A ScanRecord kept compact: its fields (less _NOT_KEPT) as typed attributes, unset ones
    missing as the record's absent keys are; slots and final as SlotStats, the signature as
    Signature. Read as attributes (r.path) where a field is always there, as the dict (r.get)
    where it may not be."""

    __slots__ = (
        *(name for name in ScanRecord.__annotations__ if name not in _NOT_KEPT),
        "status",  # the view's: status_of(), raised by the findings that name the file
        "top1",  # the view's: the drafter's step-1 top-1 when the acceptance step scored the file
    )
    # the types of the fields (ScanRecord's; the slots above are made from its keys)
    path: str
    index: int | None
    shard: str
    size: int | None
    mtime: float | None
    stamp: str | None  # inode and ctime: in the findings cache's key (dataset/cache.py), as the CLI's
    error: str
    not_sample: bool
    cached: bool
    computed: str
    mode: str
    schema: str
    tokens: int
    valid_tokens: int
    padding: int
    padding_nonzero: bool
    masked_zero_tail: int
    loss_ones: int | None
    k: int
    hidden: int
    dtype: str
    final_norm: str | None
    slots: tuple[SlotStats, ...]
    final: SlotStats | None
    signature: Signature
    fingerprint: str
    bytes_read: int
    draft_vocab: DraftVocabCounts  # with a vocab mapping: the findings' draft_vocab and the cache's digest read it
    status: str | None
    top1: float | None

    def __init__(self, d: ScanRecord) -> None:
        # over the record's keys (about 20), not the 27 slots: this runs once per streamed file
        for name, value in d.items():
            if name in _RECORD_FIELDS:
                if name in _INTERNED and isinstance(value, str):
                    value = sys.intern(value)
                setattr(self, name, value)
        if "slots" in d:
            self.slots = tuple(SlotStats(s) for s in d["slots"] or ())
        if "final" in d:
            self.final = SlotStats(d["final"]) if d["final"] else None
        if "signature" in d:
            self.signature = Signature(d["signature"] or ScanSignature())


_RECORD_FIELDS = frozenset(Record.__slots__)


def kept(r: DatasetRecord) -> DatasetRecord:
    """The dataset pipeline's `keep` for the view: the compact Record, which the pipeline's
    later steps (findings, layers, acceptance) read as they read the record's dict."""
    return cast(DatasetRecord, Record(r))


def _nonfinite(r: Record) -> int | None:
    if "error" in r:
        return None
    return sum(p.nan + p.inf for p in [*r.slots, *([r.final] if r.final else [])])


@dataclass(frozen=True)
class Column:
    name: str
    title: str
    width: int
    #: the value sorted on (None: no value, sorted last)
    value: Callable[[Record], Any]
    numeric: bool = True
    #: dropped first when the screen is narrow (higher goes first)
    drop: int = 0


def _slot_norm(i: int) -> Callable[[Record], Any]:
    def value(r: Record) -> Any:
        slots = r.get("slots")
        return slots[i].norm_mean if slots and i < len(slots) else None
    return value


def columns_for(k: int, accept: bool = False) -> list[Column]:
    """The table's columns for a dataset whose records have (at most) k slots; with `accept`
    (--drafter) the drafter's top-1 of the files the acceptance step scored."""
    cols = [
        Column("status", "", 1, lambda r: STATUS_RANK[r.get("status")], drop=0),
        Column("index", "#", 6, lambda r: r.get("index")),
        Column("path", "file", 0, lambda r: natural_key(r.path), numeric=False),
        Column("size", "size", 6, lambda r: r.get("size"), drop=3),
        Column("tokens", "T", 5, lambda r: r.get("tokens")),
        Column("valid", "valid", 5, lambda r: r.get("valid_tokens"), drop=2),
        Column("loss", "loss", 5, lambda r: r.get("loss_ones"), drop=2),
        Column("k", "k", 2, lambda r: r.get("k"), drop=4),
        Column("hidden", "H", 5, lambda r: r.get("hidden"), drop=4),
        Column("dtype", "dtype", 8, lambda r: r.get("dtype"), numeric=False, drop=3),
    ]
    cols += [Column(f"slot{i}", f"slot {i}", 7, _slot_norm(i)) for i in range(min(k, 8))]
    cols += [
        Column("final", "final", 7, lambda r: final.norm_mean if (final := r.get("final")) else None, drop=1),
        Column("nonfinite", "NaN/Inf", 7, _nonfinite),
    ]
    if accept:
        cols.insert(2, Column("top1", "top-1", 6, lambda r: r.get("top1")))
    return cols


class DatasetRows:
    """Records in arrival order; `view` is the order shown (sorted, maybe filtered) as indices.

    A record is taken as it arrives (take(): its status, strip values and sort key, O(1) each,
    in the scan's time slices) and shown at the next flush (link_in(): a merge of the batch into
    the sorted order), so a flush of thousands of records costs a few milliseconds of the event
    loop that also answers the keys.

    The per-slot norms are kept as sorted lists too (`norms`, merged when the strips are
    binned), so re-binning 100,000 files while they stream in costs a merge, not a sort.
    """

    def __init__(self, accept: bool = False) -> None:
        self.records: list[Record] = []
        self.k = 0
        self.accept = accept  # --drafter: the top-1 column
        self.columns = columns_for(0)
        self.sort_col = "path"
        self.descending = False
        self._keys: list[tuple] = []  # sort key of each record for the current column
        self._order: list[int] = []
        self.filter: frozenset[str] | None = None
        self.filter_label = ""
        self.view: list[int] = []
        #: per-record status, raised by findings that name the file
        self.by_path: dict[str, int] = {}
        #: finite norm_mean of each slot (then the final state's) over the files, sorted up to
        #: the last merge; _new_norms holds what arrived since
        self._norms: list[list[float]] = []
        self._final_norms: list[float] = []
        self._new_norms: list[list[float]] = []
        self._new_final: list[float] = []
        #: records taken (take()) and their sort keys, not yet linked in (link_in())
        self._taken: list[Record] = []
        self._taken_keys: list[tuple] = []
        self._key = self._key_fn()

    def __len__(self) -> int:
        return len(self.records)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def _key_fn(self) -> Callable[[Record], tuple]:
        value = self.column(self.sort_col).value
        # missing values last in either direction: the order is kept ascending, shown reversed
        # when descending, so a missing value sorts first under descending keys
        flag = self.descending

        def key(r: Record) -> tuple:
            v = value(r)
            return (not flag, 0) if v is None else (flag, v)

        return key

    def take(self, r: Record) -> None:
        """One record as it arrives: its status, strip values and sort key, all O(1), done in the
        scan's own time slices; it is shown at the next link_in(). Not shown until then."""
        r.status = status_of(r)
        k = r.get("k") or 0
        if k > self.k:
            self.k = k
            self.columns = columns_for(k, self.accept)
        slots = r.get("slots")
        if slots:
            new_norms = self._new_norms
            while len(new_norms) < len(slots):
                new_norms.append([])
            for i, st in enumerate(slots):
                v = st.norm_mean
                if v is not None and math.isfinite(v):
                    new_norms[i].append(v)
            final = r.get("final")
            if final is not None and final.norm_mean is not None:
                self._new_final.append(final.norm_mean)
        self._taken.append(r)
        self._taken_keys.append(self._key(r))

    @property
    def waiting(self) -> int:
        """Records taken but not yet linked in."""
        return len(self._taken)

    def link_in(self) -> int:
        """Show the records taken since the last call: they merge into the sorted order (the
        batch sorted on its own, each record placed by binary search, the order rebuilt once
        by slices: one pass of copying pointers, not one list insertion per record)."""
        batch, batch_keys = self._taken, self._taken_keys
        if not batch:
            return 0
        self._taken, self._taken_keys = [], []
        start = len(self.records)
        by_path = self.by_path
        for i, r in enumerate(batch, start):
            by_path[r.path] = i
        self.records += batch
        keys = self._keys
        keys += batch_keys
        new = range(start, len(self.records))
        get = keys.__getitem__
        batch_order = sorted(new, key=get)
        order = self._order
        if len(batch_order) >= len(order):
            self._order = sorted([*order, *batch_order], key=get)
        else:
            # equal keys: the new record after the ones already there, as a stable sort would
            merged: list[int] = []
            at = 0
            for i in batch_order:
                pos = bisect_right(order, keys[i], at, key=get)
                merged += order[at:pos]
                merged.append(i)
                at = pos
            merged += order[at:]
            self._order = merged
        self._refilter()
        return len(batch)

    def add(self, batch: Iterable[Record]) -> int:
        for r in batch:
            self.take(r)
        return self.link_in()

    def norms(self, part: int | None) -> list[float]:
        """The sorted finite norm_mean values of slot `part` (None: the final state) over the
        records taken so far. One part at a time: merging every slot's 100,000 values at once
        costs the event loop a key's budget."""
        if part is None:
            xs, new = self._final_norms, self._new_final
        else:
            while len(self._norms) < len(self._new_norms):
                self._norms.append([])
            if part >= len(self._norms):
                return []
            xs, new = self._norms[part], self._new_norms[part]
        if new:
            xs += new
            xs.sort()  # a sorted run and a short one: the sort merges, about linear
            new.clear()
        return xs

    def parts(self) -> list[int | None]:
        """What the strips show: each slot, then the final state (None)."""
        return [*range(max(self.k, 0)), None]

    def sort(self, column: str, descending: bool) -> None:
        self.sort_col, self.descending = column, descending
        key = self._key = self._key_fn()
        self._keys = [key(r) for r in self.records]
        self._taken_keys = [key(r) for r in self._taken]
        self._order = sorted(range(len(self.records)), key=self._keys.__getitem__)
        self._refilter()

    def cycle_sort(self) -> None:
        names = [c.name for c in self.columns]
        i = names.index(self.sort_col) if self.sort_col in names else -1
        self.sort(names[(i + 1) % len(names)], self.descending)

    def flip(self) -> None:
        self.sort(self.sort_col, not self.descending)

    def set_filter(self, paths: Iterable[str] | None, label: str = "") -> None:
        self.filter = None if paths is None else frozenset(paths)
        self.filter_label = label if paths is not None else ""
        self._refilter()

    def _refilter(self) -> None:
        order = self._order[::-1] if self.descending else self._order
        if self.filter is None:
            self.view = order
        else:
            wanted, records = self.filter, self.records
            self.view = [i for i in order if records[i].path in wanted]

    def set_top1(self, scored: Iterable[AcceptScore]) -> None:
        """The acceptance step's per-file results: each scored file's top-1 (sortable)."""
        for res in scored:
            path, top1 = res.get("path"), res.get("top1")
            i = self.by_path.get(path) if path is not None else None
            if i is not None and top1 is not None:
                self.records[i].top1 = top1
        self.columns = columns_for(self.k, True)
        self.accept = True
        self.sort(self.sort_col, self.descending)

    def unmark(self, paths: Iterable[str]) -> None:
        """Files a finding no longer names (the layers step verified them): back to their own status."""
        for p in paths:
            i = self.by_path.get(p)
            if i is not None:
                self.records[i].status = status_of(self.records[i])

    def mark(self, paths: Iterable[str], status: str) -> None:
        """Files a finding names: their status is at least `status` (warning / error)."""
        for p in paths:
            i = self.by_path.get(p)
            if i is None:
                continue
            r = self.records[i]
            r.status = raised(r.get("status"), [status])  # the browser's marks follow the same rule
        if self.sort_col == "status":
            self.sort(self.sort_col, self.descending)
