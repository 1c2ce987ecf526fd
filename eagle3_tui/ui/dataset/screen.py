"""The dataset view (D): a folder tree's files scanned where the data lives: findings, a strip per slot, a file table.

Opened by the main screen with the open Source, the folder as a Target and a `post` callable (ShowSample, FileAction,
ScanMarksWanted). One worker drives dataset/pipeline.py (as `scan`): the scan, the record cache, the findings (torch in
a child process), with --model the layers of a few files identified next to the data (--drafter adds the serve-check:
ui/dataset/serving_table.py); records shown at most FLUSH_SECONDS apart, the other events as messages
(ui/dataset/messages.py). esc stops the step that runs; a rescan or leaving stops the pipeline."""

from __future__ import annotations

import asyncio
import gc
import posixpath
import time
from collections.abc import Callable
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import OptionList, ProgressBar

from eagle3_tui.dataset import pipeline as pl
from eagle3_tui.dataset.findings_child import ChildRuns
from eagle3_tui.dataset.marks import marked_paths
from eagle3_tui.dataset.pipeline import DatasetPipeline, progress_text
from eagle3_tui.dataset.shapes import LayersEntry
from eagle3_tui.engines.results.findings import Finding, finding
from eagle3_tui.engines.results.scan import ScanProgressData
from eagle3_tui.engines.scan.options import ScanOptions
from eagle3_tui.names import printable
from eagle3_tui.sources.base import Source
from eagle3_tui.target import Target
from eagle3_tui.ui import keys
from eagle3_tui.ui.dataset import accept as dataset_accept
from eagle3_tui.ui.dataset import messages
from eagle3_tui.ui.dataset.binning import StripBinning
from eagle3_tui.ui.dataset.bins import SlotBins
from eagle3_tui.ui.dataset.exporting import DatasetExporter
from eagle3_tui.ui.dataset.findings import DatasetFindings, finding_paths, merged
from eagle3_tui.ui.dataset.layout import ShortLayout
from eagle3_tui.ui.dataset.model import DatasetRows, Record, kept
from eagle3_tui.ui.dataset.norm_strip import NormStrip
from eagle3_tui.ui.dataset.serving_table import ServingTable
from eagle3_tui.ui.dataset.table import DatasetTable
from eagle3_tui.ui.shared.messages import StatusMessage
from eagle3_tui.ui.shared.status import KeysFooter, Line, StatusLine

FLUSH_SECONDS = 0.1
KEPT = "dataset-kept"  # a view left by enter on a file is kept as this (ui/dataset/kept.py)
#: the scan worker lets the screen draw and answer keys after this long taking records in a row
YIELD_SECONDS = 0.001


class DatasetScreen(ShortLayout, Screen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [*keys.DATASET]
    AUTO_FOCUS = "#ds-table"

    def __init__(self, source: Source, folder: Target, where: str, post: Callable[[Message], object], *,
                 options: ScanOptions | None = None, model: str | None = None, drafter: str | None = None,
                 model_given: str | None = None, accept_off: str | None = None) -> None:
        """options: the scan's (defaults: a quick scan, every core, the cache); model / drafter:
        the folders on the data's machine for the layers step (None: not given, or elsewhere);
        model_given: --model as the user typed it (the layers' heading names it); accept_off: why
        a --drafter given runs no acceptance (start-up found it unusable), said in the title."""
        super().__init__()
        self.source, self.folder, self.where, self._post_main = source, folder, where, post
        self.options = (options or ScanOptions()).with_(model=model, drafter=drafter, drafter_per_file=False,
                                                         accept=None if accept_off else drafter)  # ui/dataset/accept.py
        self.use_cache = self.options.use_cache
        self.pipeline: DatasetPipeline | None = None
        self.rows = DatasetRows()
        self.generation = 0
        #: "scanning", "findings" (computing them), "done", "cancelled", "failed"
        self.state = "scanning"
        self.progress: ScanProgressData = {}
        self.binning = StripBinning()
        self._started = 0.0
        self.findings: list[Finding] = []
        self._filter_index: int | None = None
        self.scan_error: str | None = None
        self.model, self.drafter, self.model_given = model, drafter, model_given
        self.accept_off = accept_off
        #: the layers step: None (not run), "identifying", "done", "cancelled", "failed"
        self.layers_state: str | None = None
        #: dataset/layers.py's report entries of the last layers step
        self.layer_entries: list[LayersEntry] = []
        #: the acceptance step (--drafter; ui/dataset/accept.py)
        self.accept_state: str | None = None
        self.exporter = DatasetExporter(self)  # e, y

    def compose(self) -> ComposeResult:
        yield Line(id="ds-title")
        with Horizontal(id="ds-progress"):
            # the percentage in our own line: the bar's is a Label, and each new figure in it
            # lays out the whole screen (~7-15 ms with 100,000 records, ten times a second)
            yield ProgressBar(id="ds-bar", show_eta=False, show_percentage=False)
            yield Line(id="ds-progress-text")
        yield DatasetFindings(id="ds-findings")
        yield ServingTable(id="ds-serving")  # --drafter with --model: the serve-check
        yield NormStrip(id="ds-strip")
        yield DatasetTable(self.rows, id="ds-table")
        yield StatusLine(id="ds-status")
        yield KeysFooter(compact=True)

    @property
    def table(self) -> DatasetTable:
        return self.query_one(DatasetTable)

    @property
    def findings_list(self) -> DatasetFindings:
        return self.query_one(DatasetFindings)

    @property
    def serving(self) -> ServingTable:
        return self.query_one(ServingTable)

    def on_mount(self) -> None:
        self.query_one("#ds-title", Line).update(
            f" dataset  {printable(self.folder.path)}  on {self.where}"
            + (f"  · {self.accept_off}" if self.accept_off else ""))
        self.query_one("#ds-findings").border_title = "findings"
        self.query_one(NormStrip).show([])
        self.set_interval(FLUSH_SECONDS, self._flush, name="dataset-flush")
        self.start()

    # ----- the scan

    def start(self) -> None:
        self.layers_state, self.layer_entries, self.accept_state = None, [], None  # accept: ui/dataset/accept.py
        self.generation += 1
        self.serving.reset()  # the check of the last scan goes
        self.state = "scanning"
        self.scan_error = None
        self.progress = {}
        self.rows = DatasetRows(accept=self.options.accept is not None)
        self.binning.reset()
        self.table.rows = self.rows
        self.table.message = "scanning…"
        self.table.rows_changed()
        self._filter_index = None
        self.findings = []
        self.query_one(NormStrip).show([])
        self.findings_list.show_note("findings come when the scan ends (esc cancels it)")
        self.query_one("#ds-progress").display = True
        self.query_one(ProgressBar).update(total=None, progress=0)
        self._started = time.monotonic()
        self._show_progress()
        self.set_status(f"scanning on {self.where}… (esc cancels)")
        self.run_scan(self.generation)

    @work(exclusive=True, group="scan")
    async def run_scan(self, generation: int) -> None:
        """The pipeline (dataset/pipeline.py) from the scan to the layers; its events become the
        screen's rows and messages. Cancelling the worker (a rescan, leaving) stops it for good;
        esc stops the step that runs (self.pipeline.cancel())."""
        pipeline = self.pipeline = DatasetPipeline(
            self.source, self.folder.path, self.options,
            open_cache=lambda: self.make_cache() if self.use_cache else None, layer_runs=self.layer_runs,
            keep=kept)
        clock = time.perf_counter
        until = clock() + YIELD_SECONDS
        try:
            async for event in pipeline.events():
                if generation != self.generation:
                    break
                if isinstance(event, Record):
                    self.rows.take(event)
                    if clock() >= until:
                        # a burst of records (the cache, a big page) must not starve the keys; on
                        # a loaded machine a count of records is no bound on the time they take
                        await asyncio.sleep(0)
                        until = clock() + YIELD_SECONDS
                else:
                    self._on_event(generation, event, pipeline)
        except asyncio.CancelledError:
            pipeline.close()
            raise
        except Exception as err:  # noqa: BLE001 - shown on the screen; the app keeps running
            why = f"{type(err).__name__}: {err}"
            failed = finding("findings_failed", "error", why)
            self.post_message(messages.ScanOutcome(generation, "failed", why) if pipeline.ended is None
                              else messages.FindingsReady(generation, [failed]))

    def _on_event(self, generation: int, event, pipeline: DatasetPipeline) -> None:
        if isinstance(event, pl.Progress):
            self.progress = event.progress
        elif isinstance(event, pl.Resuming):
            self.post_message(StatusMessage(f"{event.reason}; resuming ({event.attempt}/{event.of})…"))
        elif isinstance(event, pl.ScanEnded):
            if pipeline.cache_error:
                self.post_message(StatusMessage(f"record cache unavailable ({pipeline.cache_error}); scanning every file"))
            outcome = {"lost": "cancelled"}.get(event.outcome, event.outcome)
            self.post_message(messages.ScanOutcome(generation, outcome, event.error))
        elif isinstance(event, pl.Findings):
            self.post_message(messages.FindingsReady(generation, event.findings))
        elif isinstance(event, (pl.StepProgress, pl.Acceptance)):
            dataset_accept.step_event(self, event)
        elif isinstance(event, pl.Layers):
            self.post_message(messages.LayersReady(generation, event.entries, event.extra, event.planned,
                                          interrupted=event.interrupted, error=event.error))

    def _flush(self) -> None:
        """Move the records that arrived since the last flush into the table; redraw progress."""
        if self.state != "scanning" and not self.rows.waiting:
            return
        if self.rows.waiting:
            self.rows.link_in()
            # the records live as long as the view: without this, each full collection walks
            # every one of them again (a pause of most of a second at 100,000 records). Frozen
            # objects are still freed by reference counting when the view goes.
            gc.freeze()
            self.table.message = ""
            self.table.rows_changed(only_if_shown=True)
        if (bins := self.binning.step(self.rows)) is not None:  # ui/dataset/binning.py
            self._show_bins(bins)
        self._show_progress()

    def _show_bins(self, bins: list[SlotBins]) -> None:
        names = {f"slot {i}": f"slot{i}" for i in range(self.rows.k)} | {"final": "final"}
        self.table.bins = {names[b.label]: b for b in bins if b.label in names}
        self.table.refresh()  # outlier cells are coloured by the bins
        self.query_one(NormStrip).show(bins)

    def _show_progress(self) -> None:
        p = self.progress
        done = max(p.get("files_done", 0), len(self.rows) + self.rows.waiting)
        total = p.get("files_total", 0)
        bars = self.query(ProgressBar)
        if not bars:  # the flush timer can fire once more while the screen is being taken down
            return
        if p.get("listing_done") and total:
            bars.first().update(total=total, progress=min(done, total))
        text = progress_text(p, done, time.monotonic() - self._started, self.state == "cancelled")
        self.query_one("#ds-progress-text", Line).update(text)

    def on_scan_outcome(self, message: messages.ScanOutcome) -> None:
        if message.generation != self.generation:
            return
        self._flush_all()
        files = len(self.rows)
        seconds = time.monotonic() - self._started
        if message.outcome == "failed":
            self.state = "failed"
            self.scan_error = message.error
            self.table.message = printable(message.error or "scan failed", message=True)
            self.table.rows_changed()
            self.findings_list.show_note(f"the scan failed: {message.error}")
            self.set_status(message.error or "scan failed", error=True)
            self.query_one("#ds-progress").display = False
            return
        self.state = "cancelled" if message.outcome == "cancelled" else "findings"
        if message.outcome == "cancelled":
            total = self.progress.get("files_total")
            of = f" of {total:,}" if total else ""
            why = f"{message.error}: scan stopped" if message.error else "scan cancelled"
            self.set_status(f"{why} after {files:,}{of} files; the findings cover those (r scans again)",
                            error=message.error is not None)
            self._show_progress()
        else:
            self.query_one("#ds-progress").display = False
            cached = sum(1 for r in self.rows.records if r.get("cached"))
            self.set_status(f"scanned {files:,} files in {seconds:.1f} s ({cached:,} from the cache); computing findings…")
        if files == 0:
            self.table.message = "no files under this folder"
            self.table.rows_changed()
        self._show_bins(self.binning.all(self.rows))
        self.findings_list.show_note(f"computing the findings over {files:,} files…")
        self._post_main(messages.ScanMarksWanted())

    def _flush_all(self) -> None:
        if self.rows.waiting:
            self.rows.link_in()
            self.table.message = ""
            self.table.rows_changed()

    #: what runs the layer_group search (tests wrap it to hold the findings at a known point)
    layer_runs = ChildRuns

    @staticmethod
    def make_cache():
        from eagle3_tui.dataset.cache import ScanCache  # lazy: sqlite3, opened in the pipeline's thread

        return ScanCache()

    def on_findings_ready(self, message: messages.FindingsReady) -> None:
        if message.generation != self.generation:
            return
        self.findings = message.findings
        cancelled = self.state == "cancelled"
        if not cancelled:
            self.state = "done"
        self._mark_files(self.findings)
        self.table.rows_changed()
        self.findings_list.show(self.findings, len(self.rows), cancelled)
        if self.model is not None and not cancelled and len(self.rows):
            self.layers_state = "identifying"  # the pipeline goes on with them
            self.findings_list.show_tail([("note", "choosing the files to identify…")])
        else:
            self.findings_list.show_tail(messages.model_hint(self.model_given, self.model, self.rows.records))
        if not cancelled:
            self.say_findings()

    def say_findings(self) -> None:
        bad = sum(f["severity"] in ("error", "warning") for f in self.findings)
        self.set_status(f"{len(self.rows):,} files: {bad} finding{'s' if bad != 1 else ''} at warning or error level"
                        + ("; select one and press enter to see its files" if self.findings else ""))

    # ----- the layers (--model): a few representatives identified where the data is

    def show_identifying(self, i: int, n: int, path: str) -> None:
        text = f"identifying {i}/{n}: {path}…"
        self.findings_list.show_tail([("note", text)])
        self.set_status(f"{text} (esc stops)")

    def cancel_layers(self) -> None:
        self.set_status("stopping the identify calls…")
        if self.pipeline is not None:
            self.pipeline.cancel()

    def _mark_files(self, findings: list[Finding]) -> None:
        """The files an error or a warning names get its mark in the table."""
        for f in findings:
            if f["severity"] in ("error", "warning"):
                self.rows.mark(marked_paths(f), f["severity"])

    def add_findings(self, extra: list[Finding]) -> None:
        """Findings a later step made (the layers, the acceptance): sorted in, their files
        marked; the filter and the highlight follow their finding into the longer list."""
        shown = self.findings_list.highlighted
        keep = [self.findings[i] if i is not None and i < len(self.findings) else None
                for i in (self._filter_index, shown)]
        self.findings, cleared, at = merged(self.findings, extra, keep)
        if cleared:  # --model verified files a signature warning named: their marks go with it
            self.rows.unmark(cleared)
            self._mark_files(self.findings)
        self._mark_files(extra)
        self._filter_index = at[0]
        self.findings_list.show(self.findings, len(self.rows), False, highlight=at[1] or 0)

    def on_layers_ready(self, message: messages.LayersReady) -> None:
        if message.generation != self.generation:
            return
        self.layers_state = "failed" if message.error else "cancelled" if message.interrupted else "done"
        self.layer_entries = message.entries
        self.serving.layers_found(self.source, self.drafter, self.model, self.layer_entries, root=self.folder.path)
        self.add_findings(message.extra)
        self.table.rows_changed()
        self.findings_list.show_tail(messages.layers_lines(message, self.model_given or self.model or "", self.findings))
        if message.error:
            self.set_status(f"--model: {message.error}", error=True)
        else:
            self.say_findings()

    # ----- findings: enter filters the table to a finding's files, enter again clears

    @on(OptionList.OptionSelected, "#ds-findings")
    def _finding_chosen(self, event: OptionList.OptionSelected) -> None:
        index = event.option_index
        if index >= len(self.findings):
            return
        if self._filter_index == index:
            self.clear_filter()
            return
        f = self.findings[index]
        paths = finding_paths(f)
        if not paths:
            self.set_status(f"{f['code']} names no files (see its message)")
            return
        self._filter_index = index
        self.rows.set_filter(paths, f["code"])
        self.table.cursor = 0
        self.table.rows_changed()
        self.set_status(f"showing the {len(self.rows.view):,} files of {f['code']} (enter or esc shows every file)")

    def clear_filter(self) -> bool:
        if self.rows.filter is None:
            return False
        self._filter_index = None
        self.rows.set_filter(None)
        self.table.rows_changed()
        self.set_status(f"showing every file ({len(self.rows):,})")
        return True

    # ----- the table

    def on_dataset_table_chosen(self, message: DatasetTable.Chosen) -> None:
        r = message.record
        path = posixpath.join(self.folder.path, r.path)
        if message.what == "open":
            folder, name = posixpath.split(path)
            self._post_main(messages.ShowSample(self.folder.with_path(folder), name))
            if not self.app.is_screen_installed(self):  # kept as it is: esc or D comes back
                self.app.install_screen(self, KEPT)
            self.dismiss(path)
        else:
            self._post_main(messages.FileAction(message.what, path, self.post_message))

    def on_dataset_table_sort_changed(self, message: DatasetTable.SortChanged) -> None:
        col = self.rows.column(self.rows.sort_col)
        self.set_status(f"sorted by {col.title or 'status'} ({'descending' if self.rows.descending else 'ascending'}; s: next column, S: reverse)")

    def on_status_message(self, message: StatusMessage) -> None:
        message.stop()
        self.set_status(message.text, error=message.error)

    # ----- keys

    def action_back(self) -> None:
        if self.state == "scanning":
            self.cancel_scan()
        elif self.layers_state == "identifying" or self.accept_state == "scoring":
            self.cancel_layers()
        elif not self.clear_filter():
            self.dismiss(None)

    def cancel_scan(self) -> None:
        self.set_status("cancelling the scan…")
        if self.pipeline is not None:
            self.pipeline.cancel()

    def action_leave(self) -> None:
        self.dismiss(None)

    def action_rescan(self) -> None:
        if self.state in ("scanning",):
            return
        self.start()

    def action_switch_focus(self) -> None:
        """tab: the files, the findings, the serve-check's rows (when shown), the files again."""
        rows = self.serving.rows
        order = [self.table, self.findings_list, *([rows] if self.serving.display and rows.display else [])]
        at = order.index(self.focused) if self.focused in order else -1
        order[(at + 1) % len(order)].focus()

    def action_export(self) -> None:
        self.exporter.export()

    def action_copy_report(self) -> None:
        self.exporter.copy()

    def action_browser_only(self) -> None:
        self.set_status("n/p step through files in the browser; here: j/k, enter opens one")

    def set_status(self, text: str, *, error: bool = False) -> None:
        self.query_one("#ds-status", StatusLine).say(text, error=error)
