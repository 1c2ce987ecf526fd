"""`eagle3-tui scan TARGET`: check every sample of a dataset folder, where the data lives.

Text: a progress line on stderr, then the findings, then one row per shard folder.
--json: one line per file record as it finishes, then {"summary": {...}, "findings": [...]}.
Exit 0 without warning/error findings, 1 with one, 2 when the target cannot be read,
130 when interrupted (what was found until then is still printed). A connection lost during
the scan is resumed (up to 5 times, the files already read are not read again); when it stays
lost, the report of what was read is printed, marked interrupted, and the exit code is 2.
The steps run in dataset/pipeline.py (the dataset view runs the same); this module shows them.

--model DIR: after the scan, a few representative files are identified against the target model
(dataset/layers.py): the text report gains a "layers" section, the JSON summary a "layers" list.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from typing import TypedDict

from eagle3_tui.commands._options import add_connection_arguments, below_one, say, to_json_ready, with_trust_note
from eagle3_tui.commands._ray import add_ray_arguments, scan_source
from eagle3_tui.commands._scan_report import format_report
from eagle3_tui.commands._scan_text import progress_line, rows_read
from eagle3_tui.commands.ls import printable
from eagle3_tui.dataset import pipeline as pl
from eagle3_tui.dataset.acceptance import MAX_ACCEPT, format_acceptance
from eagle3_tui.dataset.cache import ScanCache
from eagle3_tui.dataset.layers import IDENTIFY_TOKENS, MAX_IDENTIFY, checked_count, format_layers
from eagle3_tui.dataset.pipeline import DatasetPipeline
from eagle3_tui.dataset.shapes import DatasetRecord
from eagle3_tui.dataset.stream import full_record
from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.results.findings import blocking
from eagle3_tui.engines.results.host import Runtime
from eagle3_tui.engines.results.scan import ScanProgressData
from eagle3_tui.engines.scan.options import (
    ACCEPT_FILES,
    CHUNK_FILES,
    DEFAULT_BUDGET,
    DEFAULT_ROWS,
    ScanOptions,
    format_size,
    parse_size,
)
from eagle3_tui.names import json_for_terminal, terminal_text, unfiltered
from eagle3_tui.sources.base import SourceError
from eagle3_tui.userdirs import writes_inside

PROGRESS_EVERY = 0.2


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="TARGET", help="dataset folder: /path or [user@]host:path")
    p.add_argument("--json", action="store_true", help="one JSON record per file, then the summary and findings")
    p.add_argument("--full", action="store_true", help="read every row (exact norms, NaN/Inf anywhere)")
    p.add_argument("--rows", type=int, default=DEFAULT_ROWS, metavar="N",
                   help=f"rows per slot a quick scan reads at most (default {DEFAULT_ROWS})")
    p.add_argument("--budget", type=_size, default=DEFAULT_BUDGET, metavar="SIZE",
                   help="bytes a quick scan reads of a sample at most, e.g. 512K, 2M (default "
                        f"{format_size(DEFAULT_BUDGET)}): as many of the --rows as fit the row width, every row of a "
                        "sample that fits; NaN/Inf are looked for in the rows read, --full reads every row")
    p.add_argument("--workers", type=int, metavar="N",
                   help="processes on the machine holding the data (default and at most: one per core there; "
                        f"at most one per {CHUNK_FILES} files to read)")
    p.add_argument("--no-cache", action="store_true", help="scan every file again, ignoring cached records")
    p.add_argument("--drafter", metavar="DIR",
                   help="EAGLE-3 drafter folder on the data's machine: per-file drafter top-1 and a finding for "
                        "files far below the rest (quick: the first N loss rows; --full: all; no cache)")
    p.add_argument("--model", metavar="DIR",
                   help="target model folder on the data's machine: after the scan, names the boundary each slot "
                        f"holds on at most {MAX_IDENTIFY} files (one of the majority, one per "
                        "layer_group finding, one per other shard when there are few), then verifies: every "
                        "suspect (outliers, run edges) and a random sample sized so that a minority of "
                        "--minority would show up with 99%% confidence (the first "
                        f"{IDENTIFY_TOKENS} tokens of each; runs every time, needs transformers there); with "
                        "--drafter also the embed_tokens of a drafter without them")
    p.add_argument("--minority", type=float, default=1.0, metavar="P",
                   help="with --model: the share of files at other layers, in percent, that the random sample "
                        "must catch with 99%% confidence (default 1)")
    p.add_argument("--identify-all", action="store_true",
                   help="with --model: identify every usable file instead of a sample (a forward pass each)")
    p.add_argument("--accept", metavar="DIR",
                   help="EAGLE-3 drafter folder on the data's machine: after the findings (and --model's layers), "
                        "the drafter's step-1 top-1 and τ per group of files (the groups --model reports), on a "
                        f"few files of each (at most {MAX_ACCEPT} in all), and a warning for a group far below "
                        "the majority; with --model, that model supplies what the drafter lacks")
    p.add_argument("--accept-files", type=int, default=ACCEPT_FILES, metavar="N",
                   help=f"files scored per group with --accept (default {ACCEPT_FILES})")
    p.add_argument("--vocab-mapping", metavar="FILE",
                   help="the drafter's vocab_mapping.pt (a path on the data's machine): adds the share of "
                        "loss tokens in the draft vocabulary (default: a vocab_mapping.pt found in the tree)")
    add_ray_arguments(p)
    add_connection_arguments(p)


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def run(args: argparse.Namespace) -> int:
    if (usage := below_one(args, "scan", "rows", "workers", "accept_files")) is not None:
        return usage
    if not 0 < args.minority <= 100:
        say(f"scan: --minority {args.minority:g}: expected a share in percent, above 0 and at most 100")
        return 2
    return asyncio.run(_scan(args))


class _Progress:
    """One self-overwriting line on a terminal's stderr; nothing in logs and pipes."""

    def __init__(self) -> None:
        self.on = sys.stderr.isatty()
        self.shown = 0.0
        self.width = 0

    def update(self, p: ScanProgressData) -> None:
        now = time.monotonic()
        if not self.on or now - self.shown < PROGRESS_EVERY:
            return
        self.shown = now
        self._show(progress_line(p))

    def note(self, line: str) -> None:
        """A line shown at once (a step that is slow per item, such as identifying)."""
        if self.on:
            self._show(line)

    def _show(self, line: str) -> None:
        line = terminal_text(line)
        self.width = max(self.width, len(line))
        unfiltered(sys.stderr).write("\r" + line.ljust(self.width))  # the CR on purpose, the line escaped
        sys.stderr.flush()

    def clear(self) -> None:
        if self.on and self.width:
            unfiltered(sys.stderr).write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


def _options(args: argparse.Namespace, target):
    """The ScanOptions of the command line, or the exit code of a bad option (said on stderr)."""
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import local_folder_problem, options_on_host
    from eagle3_tui.target import TargetError

    try:  # a plain path, or `host:path` of the data's own host: a file on the data's machine
        folders = options_on_host(args, target, {"vocab_mapping": "--vocab-mapping", "drafter": "--drafter",
                                                 "model": "--model", "accept": "--accept"})
    except (SourceError, TargetError) as err:
        say(f"scan: {err}")
        return 2
    vocab_mapping = folders["vocab_mapping"]
    if vocab_mapping is not None and not target.is_remote:
        from eagle3_tui.engines.model.vocab import VocabError, load_mapping

        try:
            vocab_mapping = load_mapping(vocab_mapping).file
        except VocabError as err:
            say(f"scan: --vocab-mapping: {err}")
            return 2
    options = ScanOptions(full=args.full, rows=args.rows, budget=args.budget, workers=args.workers,
                          drafter=folders["drafter"], model=folders["model"], vocab_mapping=vocab_mapping,
                          accept=folders["accept"], accept_files=args.accept_files,
                          use_cache=not args.no_cache, minority=args.minority / 100,
                          identify_all=args.identify_all)
    # a model or --accept drafter here is checked before the scan, as --vocab-mapping is (a
    # drafter given with --drafter is checked by the scan itself, next to the data)
    if not target.is_remote and (problem := local_folder_problem(options.model, options.accept)) is not None:
        say(f"scan: {problem}")
        return 2
    if not target.is_remote and options.use_cache:  # the record cache would land in the dataset

        if (problem := writes_inside(target.path, data_too=False)) is not None:
            say(f"scan: {problem}")
            return 2
    return options


async def _scan(args: argparse.Namespace) -> int:
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import explain_source_error, open_cli_source
    from eagle3_tui.target import TargetError, parse_target

    started = time.monotonic()
    try:
        target = parse_target(args.target)
    except TargetError as err:
        say(f"scan: {err}")
        return 2
    options = _options(args, target)
    if isinstance(options, int):
        return options
    # --ray: the files are read by Ray tasks (this machine's cluster, or the box's)
    source = scan_source(args, target, lambda: open_cli_source(target, args))
    if isinstance(source, int):
        return source
    pipeline = DatasetPipeline(source, target.path, options, open_cache=ScanCache, lazy=True)
    loop = asyncio.get_running_loop()
    # ctrl+c stops the step that runs (the scan, the identify or the scoring calls); the report of
    # what was done by then is still printed, never a KeyboardInterrupt traceback
    loop.add_signal_handler(signal.SIGINT, pipeline.cancel)
    shown = _Shown(args, options)
    try:
        try:
            await source.connect()
        except SourceError as err:
            say(f"scan: {err}")
            explain_source_error(err)
            return 2
        async for event in pipeline.events():
            if isinstance(event, pl.ScanEnded) and not (options.model or options.accept):
                source.release()  # --ray: leave the cluster while findings run
            if shown.event(event, pipeline):
                continue
            if isinstance(event, pl.ScanEnded) and event.outcome == "failed":
                shown.progress.clear()
                say(f"scan: {event.error}")
                if event.cause is not None:
                    explain_source_error(event.cause)
                return 2
        shown.runtime = source.runtime()  # the agent's, while it still runs
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        await source.close()
    return shown.report(pipeline, time.monotonic() - started)


def _write_whole(out, text: str) -> None:
    """Write every byte of `text`, however a signal interrupts it. A ctrl+c that lands while a
    long line waits on a full pipe cut it through the text layer: 4 KiB of a record went
    missing and two records ran into one line (seen with the reader 0.2 s behind)."""
    out.flush()
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO): nothing to cut
        out.write(text)
        out.flush()
        return
    data = memoryview(text.encode())
    while data:
        data = data[os.write(fd, data):]


class _Shown:
    """What `scan` prints of the pipeline's events: JSON lines (or nothing) as records come,
    the progress line, and at the end the report."""

    LABELS = {"layers": "identifying", "acceptance": "scoring acceptance"}

    def __init__(self, args: argparse.Namespace, options) -> None:
        self.args, self.options = args, options
        self.out = sys.stdout
        self.progress = _Progress()
        self.held: list[str] = []  # cached lines, written in batches: an unchanged dataset is mostly these
        self.workers = 0
        self.ended: pl.ScanEnded | None = None
        self.layers: pl.Layers | None = None
        self.acceptance: pl.Acceptance | None = None
        self.finished: pl.Finished | None = None
        self.runtime: Runtime | None = None  # set once the pipeline ended, before report()

    def event(self, event: pl.Event | DatasetRecord, pipeline: DatasetPipeline) -> bool:
        """Show one event; False for the ones the caller acts on."""
        if isinstance(event, dict):
            if self.args.json:
                self.held.append(_json_line(event))
                if not event.get("cached") or len(self.held) >= 1000:  # fresh records stream as they finish
                    self._write_held()
        elif isinstance(event, pl.Progress):
            self.workers = max(self.workers, event.progress.get("workers") or 0)
            self.progress.update(event.progress)
        elif isinstance(event, pl.StepProgress):
            self.progress.note(f"{self.LABELS[event.step]} {event.done}/{event.total}: {printable(event.path)}")
        elif isinstance(event, pl.Resuming):
            self.progress.clear()
            say(f"scan: {event.reason}; resuming after {event.files} files ({event.attempt}/{event.of})")
        elif isinstance(event, pl.ScanEnded):
            self._write_held()
            self.progress.clear()
            self.ended = event
            if pipeline.cache_error:
                say(f"scan: record cache unavailable ({pipeline.cache_error}); every file was scanned")
            return event.outcome != "failed"
        elif isinstance(event, pl.Layers):
            self.progress.clear()
            self.layers = event
        elif isinstance(event, pl.Acceptance):
            self.progress.clear()
            self.acceptance = event
        elif isinstance(event, pl.Finished):
            self.finished = event
        return True

    def _write_held(self) -> None:
        if self.held:
            _write_whole(self.out, "".join(self.held))
            self.held.clear()

    def report(self, pipeline, seconds: float) -> int:
        args, fin, lay, acc, ended = self.args, self.finished, self.layers, self.acceptance, self.ended
        assert fin is not None and ended is not None, "the report follows the pipeline's ScanEnded and Finished"
        assert self.runtime is not None, "run() asks the source its runtime before the report"
        records, findings = pipeline.records, fin.findings
        summary = _summary(records, seconds, fin.stopped is not None or ended.outcome != "done", self.options,
                           self.workers)
        if ended.outcome == "lost":
            summary["connection_lost"] = ended.error
        summary.update(_loads(records, self.runtime))
        planned = acc.planned if acc is not None and acc.interrupted else None
        if args.json:
            last = {"summary": summary, "findings": findings, **({"layers": lay.entries} if lay else {}),
                    **({"acceptance": acc.entries} if acc else {})}
            line = json.dumps(to_json_ready(with_trust_note(last, summary["runtime"].get("torch"))))
            _write_whole(self.out, json_for_terminal(line) + "\n")
        else:
            layers = format_layers(lay.entries, args.model, lay.planned, checked_count(findings)) if lay else None
            acceptance = format_acceptance(acc.entries, args.accept, planned) if acc else None
            _write_whole(self.out, terminal_text(format_report([full_record(r) for r in records], findings, summary,
                                                               layers=layers, acceptance=acceptance)) + "\n")
        self._say_workers()
        if ended.outcome == "lost":
            say(f"scan: {ended.error}; the findings cover the {len(records)} files read before")
            return 2
        if fin.stopped == "acceptance" and acc is not None:
            say(f"scan: interrupted; the acceptance covers {acc.scored} of the {acc.planned} files to score")
            return 130
        if fin.stopped == "layers" and lay is not None:
            say(f"scan: interrupted; the layers cover {len(lay.entries)} of the {lay.planned} files to identify")
            return 130
        if fin.stopped:
            say("scan: interrupted; the findings cover the files scanned so far")
            return 130
        return 1 if blocking(findings) else 0

    def _say_workers(self) -> None:
        asked = self.options.workers
        if asked and self.workers and asked > self.workers:
            say(f"scan: --workers {asked}: {self.workers} ran (at most one per core of the machine holding the "
                f"data, and one per {CHUNK_FILES} files to read)")


def _json_line(record: DatasetRecord) -> str:
    raw = record.get("raw")
    if raw is not None and raw.endswith("}") and "NaN" not in raw and "Infinity" not in raw:
        # a lazy cached record: the stored line as json.dumps(decoded + cached) would write it
        return json_for_terminal(raw[:-1]) + ', "cached": true}\n' if raw != "{}" else '{"cached": true}\n'
    if raw is not None:
        record = full_record(record)
    # records hold finite floats (engines/scan/records.py): the C encoder alone, unless one does not
    try:
        return json_for_terminal(json.dumps(record, allow_nan=False)) + "\n"
    except ValueError:
        return json_for_terminal(json.dumps(to_json_ready(record))) + "\n"


class ScanLoads(TypedDict, total=False):
    runtime: Runtime  # which Python and torch read the files
    refused: str  # why pickles were not read (a torch below 2.10), once


class ScanSummary(TypedDict, total=False):
    """`scan --json`'s last line's "summary" (and the text report's counts): the counts, what a
    quick scan read (RowsRead), the scan's end, which Python and torch read (ScanLoads)."""

    files: int
    samples: int
    errors: int  # unreadable files (not those holding something else)
    not_samples: int
    cached: int  # records from the cache
    bytes_read: int
    bytes_total: int
    seconds: float
    mode: str
    workers: int
    budget: int
    rows_read: int
    rows_total: int
    interrupted: bool
    connection_lost: str | None  # the scan ended "lost": why
    runtime: Runtime
    refused: str


def _loads(records, runtime: Runtime) -> ScanLoads:
    """"runtime" (which Python and torch read), and "refused": once, why pickles were not read."""
    refused = [r["error"] for r in records if torch_gate.refused(r.get("error"))]
    return {"runtime": runtime, **({"refused": f"{len(refused)} pickle files not read: {refused[0]}"}
                                            if refused else {})}


def _summary(records, seconds: float, interrupted: bool, options, workers: int = 0) -> ScanSummary:
    fresh = [r for r in records if not r.get("cached")]
    return {
        "files": len(records),
        "samples": sum("error" not in r for r in records),
        "errors": sum("error" in r and not r.get("not_sample") for r in records),
        "not_samples": sum(bool(r.get("not_sample")) for r in records),
        "cached": len(records) - len(fresh),
        "bytes_read": sum(r.get("bytes_read") or 0 for r in fresh),
        **rows_read(fresh, options),
        "bytes_total": sum(r.get("size") or 0 for r in records),
        "seconds": round(seconds, 3),
        "mode": "full" if options.full else f"quick ({options.rows} rows, budget {format_size(options.budget)} a file)",
        "workers": workers,
        "interrupted": interrupted,
    }
