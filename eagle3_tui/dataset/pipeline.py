"""The dataset pipeline, one for the CLI and the dataset view: scan -> findings -> layers ->
acceptance, as a stream of typed events. Its drivers only present them.

    pipeline = DatasetPipeline(source, path, ScanOptions(rows=16, model="/m"))
    async for event in pipeline.events():
        match event:
            case Progress(): ...          # the scan's progress (files, bytes, seconds, workers)
            case dict():  ...             # a record (engines/scan/records.py), as soon as it is read
            case Resuming(): ...          # the connection went: reconnecting, try n of N
            case ScanEnded(): ...         # how the scan ended ("done", "cancelled", "lost", "failed")
            case Findings(): ...
            case StepProgress(): ...      # identifying / scoring i of n: path
            case Layers() | Acceptance(): ...
            case Finished(): ...          # what stopped early, if anything

Records travel bare (a dict each) rather than wrapped: a scan of 100,000 cached files is mostly
handing them on. `cancel()` stops the step that runs (the scan, the identify or the scoring
calls); what was done by then still goes through the next steps that make sense (the findings of
a cancelled scan cover the files read; layers and acceptance need a whole scan). A lost
connection during the scan is resumed up to RESUME_TRIES times, the files already read skipped;
after that the scan ends "lost" and the findings cover what was read.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from eagle3_tui.dataset.stream import findings_for, scan_dataset
from eagle3_tui.dataset.verify import settle
from eagle3_tui.engines.results import error_result, sort_findings
from eagle3_tui.engines.scan.options import ScanOptions
from eagle3_tui.sources.base import ConnectionLost, SourceError

#: reconnections of a scan whose connection went (the SSH source's own schedule of 5 tries)
RESUME_TRIES = 5


@dataclass(frozen=True)
class Progress:
    progress: dict[str, Any]


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
    findings: list[dict[str, Any]]
    complete: bool  # over a whole scan (else over the files read before it stopped)


@dataclass(frozen=True)
class StepProgress:
    step: str  # "layers" or "acceptance"
    done: int
    total: int
    path: str


@dataclass(frozen=True)
class Layers:
    entries: list[dict[str, Any]]
    planned: int
    extra: list[dict[str, Any]]  # findings the layers add
    interrupted: bool
    error: str | None = None


@dataclass(frozen=True)
class Acceptance:
    entries: list[dict[str, Any]]
    planned: int
    scored: int
    extra: list[dict[str, Any]]
    interrupted: bool
    error: str | None = None
    #: every file scored: {"path", "top1", "tau", ...} or {"path", "error"} (the dataset view's column)
    files: tuple = ()


@dataclass(frozen=True)
class Finished:
    findings: list[dict[str, Any]]  # every finding, the steps' included, sorted
    stopped: str | None  # the step cancelled or cut short ("scan", "layers", "acceptance"), or None


Event = Progress | Resuming | ScanEnded | Findings | StepProgress | Layers | Acceptance | Finished


@dataclass
class DatasetPipeline:
    source: Any
    path: str
    options: ScanOptions = field(default_factory=ScanOptions)
    #: opens the record cache (or returns None: no cache); a broken cache is told as `cache_error`
    open_cache: Callable[[], Any] | None = None
    lazy: bool = False  # cached records undecoded (dataset/stream.py); the CLI prints them as stored
    layer_runs: Callable[[Callable[[], bool]], Any] | None = None  # findings_child.ChildRuns in the TUI
    resume_tries: int = RESUME_TRIES

    def __post_init__(self) -> None:
        self.records: list[dict[str, Any]] = []
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

    async def events(self) -> AsyncIterator[Any]:
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
            layers = None
            async for event in self._layers(findings):
                layers = event
                yield event
            findings = sort_findings([*settle(findings, layers.extra), *layers.extra])
            stopped = "layers" if layers.interrupted else None
        if stopped is None and self.options.accept and self.records:
            scored = None
            async for event in self._acceptance(scanned):
                scored = event
                yield event
            findings = sort_findings([*findings, *scored.extra])
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

    async def _scan(self, cache) -> AsyncIterator[Any]:
        seen: dict[str, tuple[int | None, float | None]] = {}
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
                    seen[item["path"]] = (item.get("size"), item.get("mtime"))
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
            yield Resuming(attempt, self.resume_tries, len(self.records), error)

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

    async def _findings(self, cache) -> list[dict[str, Any]]:
        runs = self.layer_runs(lambda: self._closed) if self.layer_runs is not None else None
        try:
            return await asyncio.to_thread(findings_for, self.source, self.path, self.records, cache, self.options,
                                           layer_runs=runs)
        except asyncio.CancelledError:
            self._closed = True  # the child search, if any, is killed at its next poll
            raise

    # ----------------------------------------------------------------------- per-file steps

    async def _per_file(self, step: str, run) -> AsyncIterator[Any]:
        """Run `run(shown, done)` as a task; its progress comes out as StepProgress events. Yields
        (results, interrupted, error) last."""
        queue: asyncio.Queue = asyncio.Queue()
        results: list[dict[str, Any]] = []
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

    async def _layers(self, findings) -> AsyncIterator[Any]:
        from eagle3_tui.dataset.layers import identify_picks, plan, report

        o = self.options
        picks, checks = await asyncio.to_thread(
            lambda: plan(self.records, findings, minority=o.minority, identify_all=o.identify_all))
        reps = sum(p["group"] not in ("suspect", "sample") for p in picks)

        def run(shown, done):
            return identify_picks(self.source, self.path, picks, model=o.model, drafter=o.drafter,
                                  on_progress=shown, done=done)

        async for item in self._per_file("layers", run):
            if isinstance(item, StepProgress):
                yield item
                continue
            results, interrupted, error = item
            if error is not None and len(results) < len(picks):
                results.append(error_result(picks[len(results)]["path"], error))
            entries, extra = report(picks, results, o.drafter, checks)
            yield Layers(entries, reps, extra, interrupted, error)

    async def _acceptance(self, findings) -> AsyncIterator[Any]:
        from eagle3_tui.dataset.acceptance import choose_files, report, score

        o = self.options
        plan = await asyncio.to_thread(choose_files, self.records, findings, o.accept_files)
        paths = [p for g in plan for p in g["score"]]

        def run(shown, done):
            return score(self.source, self.path, plan, drafter=o.accept, model=o.model, on_progress=shown, done=done)

        async for item in self._per_file("acceptance", run):
            if isinstance(item, StepProgress):
                yield item
                continue
            results, interrupted, error = item
            if error is not None and len(results) < len(paths):
                results.append(error_result(paths[len(results)], error))
            entries, extra = report(plan, results, o.accept)
            yield Acceptance(entries, len(paths), len(results), extra, interrupted, error, tuple(results))
