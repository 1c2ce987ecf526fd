"""Scan a dataset folder tree: one small JSON record per file, computed next to the data.

Headless and shipped to the remote box by the agent: torch and the standard library only.
This module walks the tree and runs the pool; measure.py computes one sample's numbers,
options.py holds the options and their defaults.

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
In the process pool (engines/scan/pool.py) each file has a time limit and a memory limit
(options.FILE_SECONDS, FILE_MEMORY): a file past either gets an error record and the scan goes on.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import math
import multiprocessing
import os
import re
import signal
import stat as stat_mod
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

from eagle3_tui.engines.model import vocab
from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.read.file_names import SAMPLE_EXT, natural
from eagle3_tui.engines.read.load import SMALL_FILE_BYTES, regular_file_size
from eagle3_tui.engines.read.safetensors_file import looks_like_safetensors
from eagle3_tui.engines.read.sample import NotASample, SampleError
from eagle3_tui.engines.results.errors import Cancelled, error_result
from eagle3_tui.engines.results.scan import ScanRecord
from eagle3_tui.engines.scan.measure import measure
from eagle3_tui.engines.scan.options import (  # noqa: F401 - default_workers: the scan's callers ask here
    CHUNK_FILES,
    DEFAULT_BUDGET,
    DEFAULT_ROWS,
    FILE_MEMORY,
    bounded_workers,
    default_workers,
    file_time_limit,
    mapping_identity,
)
from eagle3_tui.engines.scan.pool import TaskFailed, TimedOut, WorkerDied, item_memory, run_tasks

#: file name patterns a producer uses for samples: data_12.ckpt, hs_3.safetensors
_INDEX = re.compile(r"^[A-Za-z]+_(\d+)\.")
_MAGIC = (b"PK\x03\x04", b"\x1f\x8b", b"\x80")
#: what records._head reads of a file: its first page
_HEAD_BYTES = 4096


# ------------------------------------------------------------------------------- walking


def file_index(name: str) -> int | None:
    m = _INDEX.match(name)
    return int(m.group(1)) if m else None


Listed = tuple[str, int | None, float | None, str | None]


def file_stamp(st: os.stat_result) -> str:
    """What, beside size and mtime, says a file is the one a cached record was made of: its inode
    and ctime, which nobody can set back (a rewrite with the same size and `touch -r` keeps size
    and mtime; git's index keys on both for the same reason)."""
    return f"{st.st_ino}:{st.st_ctime_ns}"


def walk(root: str, cancel: threading.Event | None = None) -> Iterator[Listed]:
    """(relative path, size, mtime, file_stamp) of every file under root, folders in natural order.

    Symbolic links to files are followed (size None for a dead link); links to folders are not,
    so a loop cannot make the walk endless. Hidden names (".*") are skipped. A FIFO, socket or
    device comes with size None too (scan_file says what it is, without opening it).
    """
    stack = [""]
    while stack:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                entries = sorted(it, key=lambda d: natural(d.name))
        except OSError:
            if not rel:
                raise
            yield rel + "/", None, None, None  # an unreadable folder is reported like a file error
            continue
        subdirs = []
        for d in entries:
            if d.name.startswith("."):
                continue
            path = f"{rel}/{d.name}" if rel else d.name
            try:
                if d.is_dir(follow_symlinks=False):
                    subdirs.append(path)
                    continue
                st = d.stat(follow_symlinks=True)
            except OSError:
                yield path, None, None, None
                continue
            if stat_mod.S_ISREG(st.st_mode):
                yield path, st.st_size, st.st_mtime, file_stamp(st)
            elif not stat_mod.S_ISDIR(st.st_mode):  # never opened: reading a FIFO would block
                yield path, None, st.st_mtime, None
        stack.extend(reversed(subdirs))


# ------------------------------------------------------------------------------- one file


def scan_file(root: str, rel: str, size: int | None, mtime: float | None, *, full: bool = False,
              rows: int = DEFAULT_ROWS, budget: int = DEFAULT_BUDGET, drafter: tuple[str, str | None] | None = None,
              vocab_mapping: str | None = None, pair: bool = False) -> ScanRecord:
    """The record of one file; every problem becomes an error record, never an exception.
    pair: a sample's record carries the pairing print (engines/scan/pairprint.py)."""
    name = rel.rsplit("/", 1)[-1]
    base = _base(rel, size, mtime)
    path = os.path.join(root, rel)
    if size is None:
        why = _why_unread(path)
        odd = why.startswith(("a FIFO", "a socket", "a character", "a block")) and base["index"] is None
        return _error(base, why, **({"not_sample": True} if odd else {}))
    looks_like_sample = base["index"] is not None or name.endswith(SAMPLE_EXT)
    head = b""  # a small sample is read whole, gzip or not: loading it says what it is
    fd = None  # the descriptor the head was read with: the counting reader reads the rest with it
    if not looks_like_sample or size > min(SMALL_FILE_BYTES, budget):  # budget: read by the counting reader
        try:
            fd, head = _head(path)
        except OSError as err:
            return _error(base, "permission denied" if isinstance(err, PermissionError) else f"cannot read file: {err.strerror}")
    try:
        if not looks_like_sample and not _known_magic(head, size):
            return _error(base, "not a sample file", not_sample=True)
        measured = cast(dict, measure(path, size, head, full=full, rows=rows, budget=budget, drafter=drafter,
                                      vocab_mapping=vocab_mapping, pair=pair, fd=fd))
        return cast(ScanRecord, {**base, **measured})
    except NotASample as err:
        return _error(base, str(err), not_sample=True)
    except SampleError as err:
        return _error(base, _out_of_memory(str(err)) or str(err))
    except MemoryError:
        return _error(base, _OUT_OF_MEMORY)
    except Exception as err:  # one odd file must never stop a 100,000-file scan
        return _error(base, _out_of_memory(str(err)) or f"{type(err).__name__}: {str(err)[:200]}")
    finally:
        if fd is not None:
            os.close(fd)


_OUT_OF_MEMORY = "out of memory while reading the file"
#: torch's allocator ("can't allocate memory: you tried to allocate 17179869176 bytes") and its
#: mapping of a file ("unable to mmap N bytes ...: Cannot allocate memory (12)") when an allocation
#: fails: past a scan worker's limit (options.FILE_MEMORY) or the machine's
_NO_MEMORY = re.compile(r"can't allocate memory|cannot allocate memory", re.IGNORECASE)
_ASKED = re.compile(r"tried to allocate (\d+) bytes|unable to mmap (\d+) bytes")


def _out_of_memory(text: str) -> str | None:
    """The error of a file whose read ran out of memory, told from torch's message (None: not
    that), with what it asked for at once when the message says."""
    if not _NO_MEMORY.search(text):
        return None
    asked = _ASKED.search(text)
    n = int(asked.group(1) or asked.group(2)) if asked else 0
    if n < 1 << 20:
        return _OUT_OF_MEMORY
    return f"{_OUT_OF_MEMORY} (it asked for {f'{n / 2**30:.1f} GiB' if n >= 1 << 30 else f'{n >> 20} MiB'} at once)"


def _head(path: str) -> tuple[int, bytes]:
    """(an open descriptor, the first page), readahead off: a buffered read of the first bytes
    marked pages for readahead that a later read of the sample then pulled in (half a MiB of a
    64 MiB sample nobody asked for). The caller closes the descriptor; the counting reader
    (engines/scan/budget.py) reads the sample with it (one open a file, not two) and takes the
    page as read (torch's zip is read from its first page: the kernel reads a page whatever part
    of it is asked, so asking for all of it costs no byte more than the 16 the format needs).
    O_NONBLOCK: should the file have been swapped for a FIFO since the listing, opening returns
    (and the read fails) instead of waiting for a writer."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        return fd, os.pread(fd, _HEAD_BYTES, 0)
    except BaseException:
        os.close(fd)
        raise


def _error(base: dict[str, Any], message: str, **extra: Any) -> ScanRecord:
    """The record of a file that cannot be used: its place, "error" (+ "not_sample")."""
    return error_result(base["path"], message, **{k: v for k, v in base.items() if k != "path"}, **extra)  # type: ignore[return-value]


def _base(rel: str, size: int | None, mtime: float | None) -> dict[str, Any]:
    return {"path": rel, "index": file_index(rel.rsplit("/", 1)[-1]),
            "shard": rel.rsplit("/", 1)[0] if "/" in rel else "", "size": size, "mtime": mtime}


def _why_unread(path: str) -> str:
    """Why a file the walk could not size is not read (it is never opened here)."""
    if path.endswith("/"):
        return "cannot be read (folder or file)"
    try:
        regular_file_size(path)
    except SampleError as err:
        return str(err)
    return "cannot be read (folder or file)"


def _known_magic(head: bytes, size: int) -> bool:
    return head.startswith(_MAGIC) or looks_like_safetensors(head, size)


# ------------------------------------------------------------------------------- many files


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


def _init_worker(trust_data: bool = False) -> None:
    # lazy: torch: loaded when used, never at start-up
    import torch

    torch_gate.trust_data(trust_data)  # the parent's --trust-data, also where workers are spawned

    # ctrl+c is the parent's to handle (it terminates the pool); a worker dying on it would
    # lose its chunk and leave the parent waiting
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)


def _scan_chunk(args, chunk) -> Iterator[ScanRecord]:
    """In a pool worker: the records of a chunk's files, one at a time (the pool marks the file the
    worker is on before each; the chunk's records go home together). Each file may map its own
    size on top of the worker's memory limit (options.FILE_MEMORY)."""
    root, full, rows, budget, pair, drafter, vocab_mapping = args
    for rel, size, mtime in chunk:
        item_memory(size or 0)
        yield scan_file(root, rel, size, mtime, full=full, rows=rows, budget=budget, drafter=drafter,
                        vocab_mapping=vocab_mapping, pair=pair)


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


@contextlib.contextmanager
def one_torch_thread(needed: bool = True):
    """torch's intra-op threads on the tiny tensors of one sample cost more than they give, and
    on a shared machine they spin against other processes: 5-10x slower per file measured on
    2 busy cores. Process-wide while it lasts (torch has no per-thread setting)."""
    if not needed:
        yield
        return
    # lazy: torch: loaded when used, never at start-up
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


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
    .run(...) stand for walk, bounded_workers and _run. Everything else is the same.
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
        listing: list[tuple[str, int | None, float | None]] = []
        stamps: dict[str, str | None] = {}
        try:
            for rel, size, mtime, stamp in (executor.walk if executor is not None else walk)(root, cancel):
                state.files_total += 1
                state.bytes_total += size or 0
                listing.append((rel, size, mtime))
                stamps[rel] = stamp
        except Cancelled:
            return
        state.listing_done = True
        vocab_mapping = vocab.mapping_for_scan(root, vocab_mapping, [rel for rel, _, _ in listing])
        identity = mapping_identity(vocab_mapping)
        todo: list[tuple[str, int | None, float | None]] = []
        for rel, size, mtime in listing:
            k = known.get(rel) if known is not None and size is not None else None
            if (k is not None and tuple(k[:2]) == (size, mtime) and k[2] in ("*", identity)
                    and (len(k) < 4 or k[3] == stamps[rel])):
                state.files_done += 1
                state.bytes_done += size or 0
                yield {"path": rel, "size": size, "mtime": mtime, "stamp": stamps[rel], "cached": True}
            else:
                todo.append((rel, size, mtime))
        state.workers = (executor.workers if executor is not None else bounded_workers)(workers, len(todo)) if todo else 0
        if progress is not None:
            progress(state)
        if executor is not None:
            run = executor.run
        else:
            limit = file_time_limit(full, drafter is not None) if time_limit is None else time_limit
            run = functools.partial(_run, time_limit=None if math.isinf(limit) else limit)
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


def _run(root, todo, full, depth, workers, cancel, drafter=None, vocab_mapping=None, *,
         time_limit: float | None = None) -> Iterable[ScanRecord]:
    rows, budget, pair = depth
    chunks = [todo[i : i + CHUNK_FILES] for i in range(0, len(todo), CHUNK_FILES)]
    if workers <= 1 or len(chunks) <= 1:
        with one_torch_thread(bool(todo)):
            for rel, size, mtime in todo:
                if cancel.is_set():
                    return
                yield scan_file(root, rel, size, mtime, full=full, rows=rows, budget=budget, drafter=drafter,
                                vocab_mapping=vocab_mapping, pair=pair)
        return

    # fork after importing torch here: a worker then starts in milliseconds; one that imports
    # torch itself costs ~1.5 s of CPU each, taken from the cores the scan needs (spawn would too)
    import torch  # noqa: F401

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)

    # frozen objects are left out of the children's collections, which would otherwise touch
    # (and so copy, page by page) the whole heap the parent holds: torch's import, the listing
    # (scan_tree's frozen_heap unfreezes them at the end)
    gc.freeze()
    args = (root, full, rows, budget, pair, drafter, vocab_mapping)
    for item, record in run_tasks(_scan_chunk, args, chunks, workers=workers, ctx=ctx, cancel=cancel,
                                  initializer=functools.partial(_init_worker, torch_gate.trusted()),
                                  time_limit=time_limit, memory_limit=FILE_MEMORY):
        if isinstance(record, (TimedOut, WorkerDied, TaskFailed)):
            record = _error(_base(*item), _failure(record))
        yield record
        if cancel.is_set():
            return


def _failure(err: Exception) -> str:
    """The error record's text for a file the pool could not give a record."""
    if isinstance(err, TimedOut):
        return f"reading this file took longer than {err.seconds:g} s: stopped (a hostile or broken file?)"
    what = "died reading this file" if isinstance(err, WorkerDied) else "failed"
    return f"the scan worker {what}: {err}"
