"""The local machine as a Source: folders via os.scandir, numbers computed in a worker thread."""

from __future__ import annotations

import asyncio
import os
import stat as stat_mod
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.read.json_file import kind_problem
from eagle3_tui.engines.results.accept import AcceptResult
from eagle3_tui.engines.results.compare import ComparisonResult
from eagle3_tui.engines.results.identify import IdentifyOptions, IdentifyResult
from eagle3_tui.engines.results.live import LiveReport
from eagle3_tui.engines.results.scan import CapturePrint, ScanProgressItem, ScanRecord
from eagle3_tui.engines.results.summary import Summary
from eagle3_tui.engines.scan.options import DEFAULT_BUDGET, DEFAULT_ROWS
from eagle3_tui.sources.base import Entry, Source, SourceError

if TYPE_CHECKING:
    from typing import Unpack

#: what the engines answer with, as a Source hands it on with its "computed" set
EngineResult = TypeVar("EngineResult", Summary, ComparisonResult, IdentifyResult, AcceptResult, LiveReport)


# The engines are imported in the worker thread that runs them (each "lazy: engine" below): the
# TUI opens this source on its way to the first frame, which lists a folder and needs none of
# them, and together they are ~65 ms of imports (tests/test_startup_imports.py).

#: seconds between progress items of a scan
PROGRESS_EVERY = 0.2
#: cached-file stubs of a scan handed to the event loop at a time
STUB_BATCH = 512


def entry_from_stat(name: str, st: os.stat_result | None, *, dead_link: bool = False) -> Entry:
    if dead_link or st is None:
        return Entry(name, "link")
    if stat_mod.S_ISDIR(st.st_mode):
        return Entry(name, "dir", None, st.st_mtime)
    if stat_mod.S_ISREG(st.st_mode):
        return Entry(name, "file", st.st_size, st.st_mtime)
    return Entry(name, "other", None, st.st_mtime)


def scan_entry(d: os.DirEntry) -> Entry:
    try:
        return entry_from_stat(d.name, d.stat(follow_symlinks=True))
    except OSError:
        return entry_from_stat(d.name, None, dead_link=True)


def os_error_message(path: str, err: OSError) -> str:
    reason = err.strerror or type(err).__name__
    if isinstance(err, FileNotFoundError):
        reason = "no such file or folder"
    elif isinstance(err, PermissionError):
        reason = "permission denied"
    elif isinstance(err, NotADirectoryError):
        reason = "not a folder"
    return f"{path}: {reason}"


def iter_pages(path: str, page_size: int) -> Iterator[list[Entry]]:
    try:
        it = os.scandir(path)
    except OSError as err:
        raise SourceError(os_error_message(path, err)) from None
    with it:
        page: list[Entry] = []
        for d in it:
            page.append(scan_entry(d))
            if len(page) >= page_size:
                yield page
                page = []
        if page:
            yield page


class LocalSource(Source):
    label = "local"
    host = None

    async def connect(self) -> None:
        """Nothing to open; decides once whether this Python's torch may unpickle (no torch import)."""
        self.pickle_problem = torch_gate.problem(self.runtime()["torch"])

    def scan_executor(self) -> Any:
        """What lists and reads a scan's files (scan_tree's executor): None, this machine's
        pool; dataset/ray_runner.py's RaySource hands its Ray tasks."""
        return None

    async def list_pages(self, path: str, page_size: int = 1000) -> AsyncIterator[list[Entry]]:
        pages = iter_pages(path, page_size)
        while True:
            page = await asyncio.to_thread(next, pages, None)
            if page is None:
                return
            yield page

    async def stat(self, path: str) -> Entry:
        def _stat() -> Entry:
            name = os.path.basename(path.rstrip("/")) or path
            try:
                return entry_from_stat(name, os.stat(path))
            except FileNotFoundError:
                if os.path.islink(path):
                    return entry_from_stat(name, None, dead_link=True)
                raise SourceError(os_error_message(path, FileNotFoundError())) from None
            except OSError as err:
                raise SourceError(os_error_message(path, err)) from None

        return await asyncio.to_thread(_stat)

    async def read_head(self, path: str, limit: int) -> tuple[bytes, int]:
        def _read() -> tuple[bytes, int]:
            try:
                # stat first: a FIFO or device is never opened; O_NONBLOCK: one put in the file's
                # place after the stat opens without blocking, then is refused (json_file's rule)
                if (problem := kind_problem(os.stat(path).st_mode)) is not None:
                    raise SourceError(f"{os.path.basename(path)}: {problem}")
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
                with os.fdopen(fd, "rb") as fh:
                    st = os.fstat(fh.fileno())
                    if (problem := kind_problem(st.st_mode)) is not None:
                        raise SourceError(f"{os.path.basename(path)}: {problem}")
                    return fh.read(limit), st.st_size
            except OSError as err:
                raise SourceError(os_error_message(path, err)) from None

        return await asyncio.to_thread(_read)

    @staticmethod
    async def _computed_here(run: Callable[[threading.Event], EngineResult]) -> EngineResult:
        """run(cancel) in a worker thread; a cancelled await sets `cancel`, so the engine stops at
        its next chunk or layer instead of running on unseen. The result says "computed": "local"."""
        cancel = threading.Event()
        try:
            result = await asyncio.to_thread(run, cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise
        result["computed"] = "local"
        return result

    async def summarize(
        self, path: str, *, k: int = 5, slots: int | None = None, hidden: int | None = None,
        tokenizer: str | None = None, model: str | None = None,
    ) -> Summary:
        def run(cancel: threading.Event) -> Summary:
            from eagle3_tui.sources.tokenizer import with_token_text  # lazy: engine

            if model:
                from eagle3_tui.engines.model.identify import summarize_identified  # lazy: engine

                result = summarize_identified(path, model, k=k, slots=slots, hidden=hidden, cancel=cancel)
            else:
                from eagle3_tui.engines.read.stats import summarize_file  # lazy: engine

                result = summarize_file(path, k=k, slots=slots, hidden=hidden, cancel=cancel)
            return with_token_text(result, tokenizer)

        return await self._computed_here(run)

    async def accept(
        self, path: str, drafter: str, *, model: str | None = None, steps: int = 3, all_rows: bool = False,
        order: list[int] | None = None, ids_from: str | None = None,
    ) -> AcceptResult:
        def run(cancel: threading.Event) -> AcceptResult:
            from eagle3_tui.engines.model.accept import accept_file  # lazy: engine

            return accept_file(path, drafter, model=model, steps=steps, all_rows=all_rows, order=order,
                               cancel=cancel, ids_from=ids_from)

        return await self._computed_here(run)

    async def serve_live(self, root: str, *, model: str, drafter: str, engine: str, python: str | None = None,
                         accept: int = 0, timeout: float = 900.0,
                         progress: Callable[[str], None] = lambda _s: None) -> LiveReport:
        from eagle3_tui.engines.live.check import LiveError, live_check  # lazy: engine

        loop = asyncio.get_running_loop()

        def said(text: str) -> None:  # the engine's thread hands its lines to the caller's loop
            loop.call_soon_threadsafe(progress, text)

        def run(cancel: threading.Event) -> LiveReport:
            try:
                return live_check(root, model=model, drafter=drafter, engine=engine, python=python, accept=accept,
                                  timeout=timeout, cancel=cancel, progress=said)
            except LiveError as err:
                return {"engine": engine, "error": str(err)}

        return await self._computed_here(run)

    async def check_folders(self, model: str | None, drafter: str | None) -> dict[str, str]:
        from eagle3_tui.engines.model.folder_check import check_folders  # lazy: engine

        return await asyncio.to_thread(check_folders, model, drafter)

    async def pair_print(self, path: str, widths: list[int]) -> CapturePrint:
        def run() -> CapturePrint:
            from eagle3_tui.engines.scan.pairprint import capture_print  # lazy: engine

            return capture_print(path, widths)

        result = await asyncio.to_thread(run)  # one file's ids and a few rows: nothing to cancel
        result["computed"] = "local"
        return result

    async def compare(
        self, a: str, b: str, *, slots: int | None = None, hidden: int | None = None,
        tokenizer: str | None = None, model: str | None = None,
    ) -> ComparisonResult:
        def run(cancel: threading.Event) -> ComparisonResult:
            from eagle3_tui.engines.compare import compare_files  # lazy: engine
            from eagle3_tui.sources.tokenizer import with_token_text  # lazy: engine

            return with_token_text(compare_files(a, b, slots=slots, hidden=hidden, cancel=cancel, model=model),
                                   tokenizer)

        return await self._computed_here(run)

    async def identify(self, path: str, *, model: str, **options: Unpack[IdentifyOptions]) -> IdentifyResult:
        def run(cancel: threading.Event) -> IdentifyResult:
            from eagle3_tui.engines.model.identify import identify_file  # lazy: engine

            return identify_file(path, model, cancel=cancel, **options)

        return await self._computed_here(run)

    async def scan(
        self, path: str, *, full: bool = False, rows: int = DEFAULT_ROWS, budget: int = DEFAULT_BUDGET,
        workers: int | None = None,
        known: dict[str, tuple] | None = None, drafter: tuple[str, str | None] | None = None,
        vocab_mapping: str | None = None, pair: bool = False,
    ) -> AsyncIterator[ScanRecord | ScanProgressItem]:
        loop = asyncio.get_running_loop()
        handover = _Handover(loop)
        queue, hand_over, progress = handover.queue, handover.hand_over, handover.progress
        cancel = threading.Event()
        done = object()

        def _run() -> None:
            # every end of this thread, an exception included, hands `done` over (finally below):
            # the awaiting side never waits for a thread that has gone
            try:
                from eagle3_tui.engines.scan.agreement import check_drafter  # lazy: engine
                from eagle3_tui.engines.scan.records import scan_tree  # lazy: engine

                problem = check_drafter(*drafter) if drafter is not None else None
                if problem is not None:
                    _post(loop, queue.put_nowait, SourceError(f"--drafter: {problem}"))
                    return
                # the stubs of unchanged files come during the listing, thousands in a burst:
                # handed over STUB_BATCH at a time (one by one, the loop woke for every few)
                stubs: list = []
                for record in scan_tree(path, full=full, rows=rows, budget=budget, workers=workers, cancel=cancel,
                                        known=known, progress=progress, drafter=drafter,
                                        vocab_mapping=vocab_mapping, executor=self.scan_executor(), pair=pair):
                    if record.get("cached"):
                        stubs.append(record)
                        if len(stubs) >= STUB_BATCH:
                            hand_over(*stubs)
                            stubs = []
                        continue
                    if stubs:
                        hand_over(*stubs)
                        stubs = []
                    record["computed"] = self.computed
                    hand_over(record)
                    if cancel.is_set():
                        break
                if stubs:
                    hand_over(*stubs)
            except OSError as err:
                _post(loop, queue.put_nowait, SourceError(os_error_message(path, err)))
            except BaseException as err:  # noqa: BLE001 - handed to the awaiting side
                _post(loop, queue.put_nowait, err)
            finally:
                _post(loop, queue.put_nowait, done)

        thread = threading.Thread(target=_run, name="eagle3-scan", daemon=True)
        thread.start()
        try:
            while True:
                item = await queue.get()
                if item is done:
                    return
                if isinstance(item, BaseException):
                    raise item
                if isinstance(item, list):
                    for record in item:
                        yield record
                else:
                    yield item
        finally:
            cancel.set()  # the scan stops at its next file (the pool is terminated)


def _post(loop: asyncio.AbstractEventLoop, fn, *args) -> None:
    """Hand fn(*args) to the loop from the scan thread; a loop that closed meanwhile (the command
    ended on ctrl+c while the scan stopped at its next file) has nobody left to tell."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:
        pass


class _Handover:
    """Records cross from the scan thread to the loop in batches: the loop is woken only when it
    has taken every record handed over before, and then takes all that came since. One wake-up
    per record was most of what a second scan of an unchanged 20,000-file dataset cost, and a
    third of a full scan of small files (the two threads trading the GIL); no record waits.
    Progress goes at most every PROGRESS_EVERY seconds."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue = asyncio.Queue()
        self._pending: list = []
        self._lock = threading.Lock()
        self._last = 0.0

    def progress(self, state) -> None:
        now = time.monotonic()
        if now - self._last >= PROGRESS_EVERY:
            self._last = now
            _post(self.loop, self.queue.put_nowait, {"progress": state.to_json()})

    def _drain(self) -> None:
        with self._lock:
            batch = self._pending[:]
            self._pending.clear()
        self.queue.put_nowait(batch)

    def hand_over(self, *records) -> None:
        with self._lock:
            wake = not self._pending
            self._pending.extend(records)
        if wake:
            _post(self.loop, self._drain)
