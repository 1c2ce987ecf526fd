"""The dataset pipeline, one for the CLI and the dataset view: scan -> findings -> layers ->
acceptance, as a stream of typed events. Its drivers only present them.

    pipeline = DatasetPipeline(source, path, ScanOptions(rows=16, model="/m"))
    async for event in pipeline.events():
        match event:
            case Progress(): ...          # the scan's progress (files, bytes, seconds, workers)
            case dict():  ...             # a record (engines/scan/records.py), as soon as it is read
                                          # (or what `keep` made of it)
            case Resuming(): ...          # the connection went: reconnecting, try n of N
            case ScanEnded(): ...         # how the scan ended ("done", "cancelled", "lost", "failed")
            case Findings(): ...
            case StepProgress(): ...      # identifying / scoring i of n: path
            case Layers() | Acceptance(): ...
            case Finished(): ...          # what stopped early, if anything

Records travel bare (a dict each) rather than wrapped: a scan of 100,000 cached files is mostly
handing them on. The pipeline keeps every record for the steps after the scan; `keep` turns each
into what is kept and yielded (the dataset view's compact Record, about a quarter of the dict: the
view and the pipeline then hold the same objects, not a copy each).

`cancel()` stops the step that runs (the scan, the identify or the scoring calls); what was done
by then still goes through the next steps that make sense (the findings of a cancelled scan cover
the files read; layers and acceptance need a whole scan). A lost connection during the scan is
resumed up to RESUME_TRIES times, the files already read skipped; after that the scan ends "lost"
and the findings cover what was read.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

from eagle3_tui.dataset import acceptance as accept_step
from eagle3_tui.dataset import layers as layers_step
from eagle3_tui.dataset.shapes import AcceptanceEntry, AcceptScore, DatasetRecord, LayersEntry
from eagle3_tui.dataset.stream import findings_for, scan_dataset
from eagle3_tui.dataset.verify import merge_later
from eagle3_tui.engines.results.errors import error_result
from eagle3_tui.engines.results.findings import Finding
from eagle3_tui.engines.results.identify import IdentifyResult
from eagle3_tui.engines.results.scan import ScanProgressData
from eagle3_tui.engines.scan.options import ScanOptions
from eagle3_tui.sources.base import ConnectionLost, Source, SourceError

if TYPE_CHECKING:
    from eagle3_tui.dataset.cache import ScanCache

#: a step's progress: (i, n, path) of the file it starts
Shown = Callable[[int, int, str], None]

#: reconnections of a scan whose connection went (the SSH source's own schedule of 5 tries)
RESUME_TRIES = 5


@dataclass(frozen=True)
class Progress:
    progress: ScanProgressData


def progress_text(p: ScanProgressData, done: int | None = None, elapsed: float = 0.0, cancelled: bool = False) -> str:
    """The scan's progress in one line, for the dataset view's bar and the CLI's stderr: share,
    files, the bytes the scan read (counted by it, not the files' sizes: a quick scan reads
    ~0.5 MiB of a 64 MiB sample) and the time the rest takes at the rate of the files read this
    run (cached ones cost nothing). `done`: the files done as the caller counts them (else the
    scan's count); `elapsed`: the caller's seconds, when the scan has not said its own."""
    done = p.get("files_done", 0) if done is None else done
    total = p.get("files_total", 0)
    listing = p.get("listing_done", False)
    secs = max(p.get("seconds") or elapsed, 1e-6)
    text = f" {done:,}/{total:,}{'' if listing else '+'} files"
    if listing and total:
        text = f" {100 * min(done, total) // total:3d}% ·" + text
    fresh = p.get("files_read") or 0
    if fresh:
        read = p.get("bytes_read") or 0
        text += f" · read {_mib(read)} ({_mib(read / fresh)} a file, {_mib(read / secs)}/s)"
        if listing:
            text += f" · ETA {duration(max(0, total - done) * secs / fresh)}"
    if cancelled:
        text += " · cancelled"
    return text


def _mib(n: float) -> str:
    return f"{n / 2**20:.2f} MiB" if n < 10 * 2**20 else f"{n / 2**20:,.0f} MiB"


def duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


@dataclass(frozen=True)
class Resuming:
    attempt: int
    of: int
    files: int  # read so far (they are not read again)
    reason: str


@dataclass(frozen=True)
class ScanEnded:
    outcome: str  # "done", "cancelled", "lost" (the connection, after RESUME_TRIES), "failed"
    files: int
    error: str | None = None
    cause: Exception | None = field(default=None, compare=False)  # the SourceError behind `error`


@dataclass(frozen=True)
class Findings:
    findings: list[Finding]
    complete: bool  # over a whole scan (else over the files read before it stopped)


@dataclass(frozen=True)
class StepProgress:
    step: str  # "layers" or "acceptance"
    done: int
    total: int
    path: str


@dataclass(frozen=True)
class Layers:
    entries: list[LayersEntry]
    planned: int
    extra: list[Finding]  # findings the layers add
    interrupted: bool
    error: str | None = None


@dataclass(frozen=True)
class Acceptance:
    entries: list[AcceptanceEntry]
    planned: int
    scored: int
    extra: list[Finding]
    interrupted: bool
    error: str | None = None
    #: every file scored: {"path", "top1", "tau", ...} or {"path", "error"} (the dataset view's column)
    files: tuple[AcceptScore, ...] = ()


@dataclass(frozen=True)
class Finished:
    findings: list[Finding]  # every finding, the steps' included, sorted
    stopped: str | None  # the step cancelled or cut short ("scan", "layers", "acceptance"), or None


Event = Progress | Resuming | ScanEnded | Findings | StepProgress | Layers | Acceptance | Finished

T = TypeVar("T")
#: what _per_file yields last: the step's results, whether it was interrupted, the error that stopped it
StepEnd = tuple[list[T], bool, str | None]


@dataclass
class DatasetPipeline:
    source: Source
    path: str
    options: ScanOptions = field(default_factory=ScanOptions)
    #: opens the record cache (or returns None: no cache); a broken cache is told as `cache_error`
    open_cache: Callable[[], Any] | None = None
    lazy: bool = False  # cached records undecoded (dataset/stream.py); the CLI prints them as stored
    layer_runs: Callable[[Callable[[], bool]], Any] | None = None  # findings_child.ChildRuns in the TUI
    resume_tries: int = RESUME_TRIES
    #: what is kept of each record, and yielded: something that reads like the record (r["k"],
    #: r.get(), "error" in r) and keeps every field the findings, layers and acceptance read
    keep: Callable[[DatasetRecord], DatasetRecord] | None = None

    def __post_init__(self) -> None:
        self.records: list[DatasetRecord] = []
        self.ended: ScanEnded | None = None  # how the scan ended, once it has
        self.cache_error: str | None = None
        self._cancelling = False
        self._closed = False
        self._scanning = False
        #: cancel() came between steps (while the findings were computed): no step runs after
        self.cancelled_late = False
        self._task: asyncio.Task | None = None
        self._step: asyncio.Task | None = None

    def cancel(self) -> None:
        """Stop the step that runs; the pipeline goes on with what it has."""
        target = self._step or (self._task if self._scanning else None)
        if target is None or target.done():
            self.cancelled_late = True
            return
        self._cancelling = True
        target.cancel()

    def close(self) -> None:
        """Stop for good (the view went): a findings search in a child process is killed."""
        self._closed = True

    async def events(self) -> AsyncIterator[Event | DatasetRecord]:
        self._task = asyncio.current_task()
        cache = self._cache()
        try:
            async for event in self._scan(cache):
                if isinstance(event, ScanEnded):
                    self.ended = event
                yield event
        finally:
            if cache is not None:
                cache.close()
        if self.ended is None or self.ended.outcome == "failed":
            return
        whole = self.ended.outcome == "done"
        # opened again: whether the findings are kept is asked when they are computed
        cache = self._cache() if whole else None  # a partial scan's findings are not worth keeping
        try:
            findings = await self._findings(cache)
        finally:
            if cache is not None:
                cache.close()
        yield Findings(findings, whole)
        stopped = None if whole and not self.cancelled_late else "scan"
        scanned = findings
        if stopped is None and self.options.model and self.records:
            layers: Layers | None = None
            async for step in self._layers(findings):
                if isinstance(step, Layers):
                    layers = step
                yield step
            assert layers is not None  # _layers ends with one
            findings = merge_later(findings, layers.extra)
            stopped = "layers" if layers.interrupted else None
        if stopped is None and self.options.accept and self.records:
            scored: Acceptance | None = None
            async for scoring in self._acceptance(scanned):
                if isinstance(scoring, Acceptance):
                    scored = scoring
                yield scoring
            assert scored is not None  # _acceptance ends with one
            findings = merge_later(findings, scored.extra)
            stopped = "acceptance" if scored.interrupted else None
        yield Finished(findings, stopped)

    def _cache(self):
        if not self.options.use_cache or self.open_cache is None:
            return None
        try:
            return self.open_cache()
        except Exception as err:  # noqa: BLE001 - a broken cache slows the scan down, never stops it
            self.cache_error = str(err)
            return None

    # ----------------------------------------------------------------------- the scan

    async def _scan(self, cache: ScanCache | None) -> AsyncIterator[Progress | Resuming | ScanEnded | DatasetRecord]:
        seen: dict[str, tuple[int | None, float | None, str | None]] = {}
        keep = self.keep
        attempt = 0
        cause: Exception | None = None
        self._scanning = True
        while True:
            scan = scan_dataset(self.source, self.path, self.options, cache=cache, lazy=self.lazy, skip=seen)
            try:
                async for item in scan:
                    if "progress" in item:
                        yield Progress(item["progress"])
                        continue
                    seen[item["path"]] = (item.get("size"), item.get("mtime"), item.get("stamp"))
                    if keep is not None:
                        item = keep(item)
                    self.records.append(item)
                    yield item
                outcome, error, cause = "done", None, None
            except asyncio.CancelledError:
                if not self._absorb():
                    raise
                outcome, error, cause = "cancelled", None, None
            except ConnectionLost as err:
                attempt += 1
                cause = err
                if err.gave_up or attempt > self.resume_tries:
                    outcome, error = "lost", str(err)
                else:
                    outcome, error = None, str(err)
            except SourceError as err:
                outcome, error, cause = "failed", str(err), err
            finally:
                await scan.aclose()
            if outcome is not None:
                self._scanning = False
                yield ScanEnded(outcome, len(self.records), error, cause)
                return
            yield Resuming(attempt, self.resume_tries, len(self.records), error or "")

    def _absorb(self) -> bool:
        """Whether a CancelledError is our own cancel() (then the task is uncancelled and the
        pipeline goes on) rather than the driver going away."""
        if not self._cancelling or self._closed:
            return False
        self._cancelling = False
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            task.uncancel()
        return True

    # ----------------------------------------------------------------------- findings

    async def _findings(self, cache: ScanCache | None) -> list[Finding]:
        runs = self.layer_runs(lambda: self._closed) if self.layer_runs is not None else None
        try:
            return await asyncio.to_thread(findings_for, self.source, self.path, self.records, cache, self.options,
                                           layer_runs=runs)
        except asyncio.CancelledError:
            self._closed = True  # the child search, if any, is killed at its next poll
            raise

    # ----------------------------------------------------------------------- per-file steps

    async def _per_file(self, step: str, run: Callable[[Shown, list[T]], Awaitable[object]],
                        ) -> AsyncIterator[StepProgress | StepEnd[T]]:
        """Run `run(shown, done)` as a task; its progress comes out as StepProgress events. Yields
        (results, interrupted, error) last."""
        queue: asyncio.Queue[StepProgress | None] = asyncio.Queue()
        results: list[T] = []
        if self.cancelled_late:  # cancel() while the files were being chosen
            yield results, True, None
            return

        def shown(i: int, n: int, path: str) -> None:
            queue.put_nowait(StepProgress(step, i, n, path))

        self._step = asyncio.ensure_future(run(shown, results))
        self._step.add_done_callback(lambda _: queue.put_nowait(None))
        interrupted, error = False, None
        try:
            while (item := await queue.get()) is not None:
                yield item
            self._step.result()
        except asyncio.CancelledError:
            if not self._step.cancelled() or not self._absorb_step():
                self._step.cancel()
                raise
            interrupted = True
        except SourceError as err:  # the connection went: what was done counts
            error = str(err)
        finally:
            self._step = None
        yield results, interrupted, error

    def _absorb_step(self) -> bool:
        if not self._cancelling or self._closed:
            return False
        self._cancelling = False
        return True

    async def _layers(self, findings: list[Finding]) -> AsyncIterator[StepProgress | Layers]:
        o = self.options
        model = o.model
        assert model is not None  # the step runs with --model only
        picks, checks = await asyncio.to_thread(
            lambda: layers_step.plan(self.records, findings, minority=o.minority, identify_all=o.identify_all))
        reps = sum(p["group"] not in ("suspect", "sample") for p in picks)

        def run(shown: Shown, done: list[IdentifyResult]) -> Awaitable[list[IdentifyResult]]:
            return layers_step.identify_picks(self.source, self.path, picks, model=model, drafter=o.drafter,
                                  on_progress=shown, done=done)

        async for item in self._per_file("layers", run):
            if isinstance(item, StepProgress):
                yield item
                continue
            results, interrupted, error = item
            if error is not None and len(results) < len(picks):
                results.append(cast(IdentifyResult, error_result(picks[len(results)]["path"], error)))
            entries, extra = layers_step.report(picks, results, o.drafter, checks)
            yield Layers(entries, reps, extra, interrupted, error)

    async def _acceptance(self, findings: list[Finding]) -> AsyncIterator[StepProgress | Acceptance]:
        o = self.options
        drafter = o.accept
        assert drafter is not None  # the step runs with --accept only
        plan = await asyncio.to_thread(accept_step.choose_files, self.records, findings, o.accept_files)
        paths = [p for g in plan for p in g["score"]]

        def run(shown: Shown, done: list[AcceptScore]) -> Awaitable[list[AcceptScore]]:
            return accept_step.score(self.source, self.path, plan, drafter=drafter, model=o.model, on_progress=shown, done=done)

        async for item in self._per_file("acceptance", run):
            if isinstance(item, StepProgress):
                yield item
                continue
            results, interrupted, error = item
            # a connection lost on a file marks that file; a drafter that does not load marks none
            if error is not None and len(results) < len(paths) and not accept_step.drafter_failed(error, drafter):
                results.append(cast(AcceptScore, error_result(paths[len(results)], error)))
            entries, extra = accept_step.report(plan, results, drafter)
            yield Acceptance(entries, len(paths), len(results), extra, interrupted, error, tuple(results))
