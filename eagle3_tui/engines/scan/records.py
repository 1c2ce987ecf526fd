"""Scan a dataset folder tree: one small JSON record per file, computed next to the data.

Headless and shipped to the remote box by the agent: torch and the standard library only.
This module lists the tree (walk.py), stands a cached record for each file that has not changed
and has the others read (local_run.py: this machine's process pool; ray_tasks.py: Ray tasks);
file_record.py makes one file's record, measure.py computes one sample's numbers, options.py
holds the options and their defaults.

    for record in scan_tree(root, full=False, rows=DEFAULT_ROWS, workers=None, cancel=event, progress=cb):
        ...

Two depths:
- quick (default): header, ids, loss mask and up to `rows` evenly spaced valid rows (plus a couple
  of padding rows) per slot, as many as fit `budget` bytes (engines/scan/budget.py: counted
  reads at the tensors' offsets), so a big sample costs at most the budget (default 0.5 MiB).
  NaN/Inf are then only looked for in those rows. `.ckpt.gz` cannot be mapped: it costs a full read.
- full: every row (NaN/Inf anywhere, exact norms).

Records (JSON-ready, floats finite or None):
    {"path": rel, "index": N|None, "shard": rel folder, "size", "mtime", "mode", "schema",
     "tokens", "valid_tokens", "padding", "padding_nonzero", "masked_zero_tail", "loss_ones",
     "k", "hidden", "dtype", "final_norm", "slots": [slot...], "final": slot|None,
     "signature": {"rel_final": [k], "cos_next": [k-1], "cos_final": x, "massive": rows set aside},
     "fingerprint", "rows_read", "bytes_read"}
    slot = {"norm_mean", "norm_bulk", "norm_max", "nan", "inf", "first_nonfinite_row"}
(norm_bulk and the signature leave out the massive-activation rows: engines/scan/rows.py)
or {"path", "index", "shard", "size", "mtime", "error": msg} (+ "not_sample": True).
`known` files (same size and mtime as a cached record, and a record computed with the same
vocabulary mapping, see scan_tree) come back as stubs {"path", "size", "mtime", "cached": True}
without being opened. A FIFO, socket or device is never opened: its record says what it is.
In the process pool (engines/scan/local_run.py, pool.py) each file has a time limit and a memory limit
(options.FILE_SECONDS, FILE_MEMORY): a file past either gets an error record and the scan goes on.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from eagle3_tui.engines.model import vocab
from eagle3_tui.engines.results.errors import Cancelled
from eagle3_tui.engines.results.scan import ScanRecord
from eagle3_tui.engines.scan import local_run
from eagle3_tui.engines.scan.options import (
    DEFAULT_BUDGET,
    DEFAULT_ROWS,
    bounded_workers,
    file_time_limit,
    mapping_identity,
)
from eagle3_tui.engines.scan.walk import walk


class ScanProgress:
    """What a progress line or bar shows; updated by scan_tree as records arrive."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.files_total = 0
        self.bytes_total = 0
        self.listing_done = False
        self.files_done = 0
        self.files_read = 0  # files read by this scan (not from the cache): the measured rate's
        self.bytes_done = 0  # sizes of files finished (scanned or cached)
        self.bytes_read = 0  # what reading them cost
        self.workers = 0  # processes reading (bounded by the cores and the work)

    @property
    def elapsed(self) -> float:
        return max(time.monotonic() - self.started, 1e-9)

    def eta(self) -> float | None:
        if not self.listing_done or not self.bytes_done:
            return None
        left = self.bytes_total - self.bytes_done
        return left * self.elapsed / self.bytes_done

    def to_json(self) -> dict[str, Any]:
        return {
            "files_done": self.files_done, "files_total": self.files_total, "files_read": self.files_read,
            "bytes_done": self.bytes_done, "bytes_total": self.bytes_total,
            "bytes_read": self.bytes_read, "seconds": round(self.elapsed, 3),
            "listing_done": self.listing_done, "workers": self.workers,
        }


@contextlib.contextmanager
def frozen_heap():
    """The objects alive now (torch's and the package's modules, the caller's) left out of the
    garbage collector's full collections while the scan lasts: each one walks the whole heap,
    ~80 ms with torch imported, and the listing and the records of a scan trigger several (one
    landed in a 1 s scan of 2,000 files: 8% of it). Frozen objects are still freed by reference
    counting. The heap is left as frozen as it was found: unfrozen again only when nothing was
    frozen before (the TUI freezes its own and keeps them so)."""
    ours = gc.get_freeze_count() == 0
    gc.freeze()
    try:
        yield
    finally:
        if ours:
            gc.unfreeze()


def scan_tree(
    root: str,
    *,
    full: bool = False,
    rows: int = DEFAULT_ROWS,
    budget: int = DEFAULT_BUDGET,
    workers: int | None = None,
    cancel: threading.Event | None = None,
    known: dict[str, tuple] | None = None,
    progress: Callable[[ScanProgress], None] | None = None,
    drafter: tuple[str, str | None] | None = None,
    vocab_mapping: str | None = None,
    executor: Any = None,
    pair: bool = False,
    time_limit: float | None = None,
) -> Iterator[ScanRecord]:
    """Records of every file under root, each as soon as it is ready (not in path order).

    drafter: (drafter folder, model folder or None): each record gets the drafter's top-1
    (engines/scan/agreement.py); the caller checks the folder first (agreement.check_drafter),
    which also loads it here once, before the workers fork.

    Raises OSError when root itself cannot be listed. When `cancel` is set, stops within about
    one chunk of files per worker and returns (records already yielded stand).
    `vocab_mapping` (else the shallowest vocab_mapping.pt in the tree) adds draft-vocabulary
    counts, with the mapping's identity (options.mapping_identity) in draft_vocab.mapping.
    known: rel -> (size, mtime, variant[, stamp]) of cached records; one stands for the file when
    size, mtime and stamp (file_stamp: inode and ctime) match and its variant is "*" (it does not
    depend on the mapping) or the identity of the mapping this scan uses (None: none). Every
    record carries its "stamp". Stubs come once the listing is complete.
    `workers` is bounded by the cores and the work (ScanProgress.workers says how many ran).
    executor: what lists the tree and reads the files instead of walk() and this machine's pool
    (dataset/ray_runner.py: Ray tasks); its .walk(root, cancel), .workers(requested, files) and
    .run(...) stand for walk, bounded_workers and local_run.run. Everything else is the same.
    pair: records carry the pairing print (only `pair` asks; the rows read are the same).
    time_limit: seconds a file may take in a pool worker before the worker is stopped and the file
    gets an error record ("took longer than"); None: options.file_time_limit (60 s, 600 s when
    a drafter scores every row), math.inf: none. The pool's workers also hold at most
    options.FILE_MEMORY beyond what they start with and the file's size. Neither applies to a
    scan small enough to run in this process (one chunk of files, or one worker), nor to an
    executor's.
    """
    with frozen_heap():
        if executor is None and not os.path.isdir(root):
            os.scandir(root).close()  # raises the real error (missing, not a folder, permission)
        cancel = cancel or threading.Event()
        state = ScanProgress()
        try:
            listing, stamps = _listing(root, executor, cancel, state)
        except Cancelled:
            return
        vocab_mapping = vocab.mapping_for_scan(root, vocab_mapping, [rel for rel, _, _ in listing])
        identity = mapping_identity(vocab_mapping)
        cached, todo = _cached_or_not(listing, stamps, known, identity)
        for rel, size, mtime in cached:
            state.files_done += 1
            state.bytes_done += size or 0
            yield {"path": rel, "size": size, "mtime": mtime, "stamp": stamps[rel], "cached": True}
        state.workers = (executor.workers if executor is not None else bounded_workers)(workers, len(todo)) if todo else 0
        if progress is not None:
            progress(state)
        run = _reader(executor, full, drafter, time_limit)
        for record in run(root, todo, full, (rows, budget, pair), state.workers, cancel, drafter, vocab_mapping):
            state.files_done += 1
            state.files_read += 1
            state.bytes_done += record.get("size") or 0
            state.bytes_read += record.get("bytes_read") or 0
            if identity is not None and "draft_vocab" in record:
                record["draft_vocab"]["mapping"] = identity
            record["stamp"] = stamps.get(record["path"])
            yield record
            if progress is not None:
                progress(state)


def _listing(root: str, executor: Any, cancel: threading.Event,
             state: ScanProgress) -> tuple[list[tuple[str, int | None, float | None]], dict[str, str | None]]:
    """(rel, size, mtime) of every file under root and rel -> its file_stamp, listed by the
    executor's walk or walk(); the files and bytes counted into state. Raises Cancelled."""
    listing: list[tuple[str, int | None, float | None]] = []
    stamps: dict[str, str | None] = {}
    for rel, size, mtime, stamp in (executor.walk if executor is not None else walk)(root, cancel):
        state.files_total += 1
        state.bytes_total += size or 0
        listing.append((rel, size, mtime))
        stamps[rel] = stamp
    state.listing_done = True
    return listing, stamps


def _cached_or_not(listing: list, stamps: dict[str, str | None], known: dict[str, tuple] | None,
                   identity: str | None) -> tuple[list, list]:
    """(the files a cached record stands for, the files to read) of the listing: a record stands
    when size, mtime and stamp match and its variant is "*" or `identity` (scan_tree's known)."""
    cached, todo = [], []
    for rel, size, mtime in listing:
        k = known.get(rel) if known is not None and size is not None else None
        if (k is not None and tuple(k[:2]) == (size, mtime) and k[2] in ("*", identity)
                and (len(k) < 4 or k[3] == stamps[rel])):
            cached.append((rel, size, mtime))
        else:
            todo.append((rel, size, mtime))
    return cached, todo


def _reader(executor: Any, full: bool, drafter: tuple[str, str | None] | None,
            time_limit: float | None) -> Callable[..., Iterable[ScanRecord]]:
    """What reads the files to read: the executor's run, else this machine's (local_run.run), with
    the time a file may take in a pool worker (scan_tree's time_limit)."""
    if executor is not None:
        return executor.run
    limit = file_time_limit(full, drafter is not None) if time_limit is None else time_limit
    return functools.partial(local_run.run, time_limit=None if math.isinf(limit) else limit)
