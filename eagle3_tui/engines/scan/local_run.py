"""scan_tree's own executor (engines/scan/records.py): the files read on this machine, in this
process for a scan of one chunk of files or one worker, else in a pool of forked workers
(engines/scan/pool.py) that each hold a time and a memory limit a file (options.FILE_SECONDS,
FILE_MEMORY): a file past either gets an error record and the scan goes on. The Ray executor is
engines/scan/ray_tasks.py.

Shipped to the remote box with the scan: torch and the standard library only.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import multiprocessing
import signal
from collections.abc import Iterable, Iterator

from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.results.scan import ScanRecord
from eagle3_tui.engines.scan.file_record import error_record, place, scan_file
from eagle3_tui.engines.scan.options import CHUNK_FILES, FILE_MEMORY
from eagle3_tui.engines.scan.pool import TaskFailed, TimedOut, WorkerDied, item_memory, run_tasks


def run(root, todo, full, depth, workers, cancel, drafter=None, vocab_mapping=None, *,
        time_limit: float | None = None) -> Iterable[ScanRecord]:
    """The records of `todo`'s files ((rel, size, mtime) each; depth: (rows, budget, pair)) as they
    are read: in this process when one worker or one chunk of files is all there is, else in the pool."""
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
            record = error_record(place(*item), _failure(record))
        yield record
        if cancel.is_set():
            return


def _failure(err: Exception) -> str:
    """The error record's text for a file the pool could not give a record."""
    if isinstance(err, TimedOut):
        return f"reading this file took longer than {err.seconds:g} s: stopped (a hostile or broken file?)"
    what = "died reading this file" if isinstance(err, WorkerDied) else "failed"
    return f"the scan worker {what}: {err}"


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
