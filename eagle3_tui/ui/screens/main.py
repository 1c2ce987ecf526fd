"""The main screen: folder browser (left), sample panel (right), location and status lines.

This screen owns the state: which target (a parsed Target) and source are open, which folder,
which listing generation is current, which file the sample panel wants, the compare pins and
the bookmarks. Workers (ui/listing_stream.py) only talk to the Source and post messages; the
helpers it holds (Bookmarking, ComparePins) are state that posts or returns what to show.
The app is known only through the narrow `Host` interface below.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any, Protocol

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input

from eagle3_tui.names import printable
from eagle3_tui.sources.base import Entry, Source, SourceError
from eagle3_tui.target import Target, TargetError, parse_target
from eagle3_tui.ui import keys, listing_stream
from eagle3_tui.ui.bookmarking import POLL_SECONDS, Bookmarking
from eagle3_tui.ui.format import is_sample_name
from eagle3_tui.ui.messages import (
    BookmarkJump,
    ConnectionStatus,
    FileAction,
    ListingDone,
    ListingPage,
    MarksChanged,
    ScanMarksLoaded,
    ScanMarksWanted,
    ShardsFound,
    ShowSample,
    SourceFailed,
    SourceReady,
    StatusMessage,
    StoreOpened,
    SummaryLoaded,
)
from eagle3_tui.ui.paths import describe_entry, entry_note, parent_folder, shard_pattern
from eagle3_tui.ui.pins import ComparePins, Pin, PinsBar
from eagle3_tui.ui.widgets import acceptance
from eagle3_tui.ui.widgets.browser import BrowserList
from eagle3_tui.ui.widgets.sample_view import SampleView
from eagle3_tui.ui.widgets.status import Line, StatusLine

class Identified(Message):
    """The identification of one file (I) came back: the Source's identify result."""

    def __init__(self, path: str, result: dict[str, Any]) -> None:
        super().__init__()
        self.path = path
        self.result = result


if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from eagle3_tui.ui.analysis import Analysis

    class Host(Protocol):
        """What the main screen needs of the app: how to open a target, and where bookmarks live."""

        opener: Callable[..., Awaitable[Any]]
        remote_python: str | None
        accept_new_host_key: bool
        data_dir: str | None
        analysis: Analysis

        async def confirm_host_key(self, prompt: Any) -> bool: ...

__all__ = ["MainScreen", "parent_folder"]

#: cursor rests this long on a sample before it is loaded (moving on cancels the load)
DEBOUNCE_SECONDS = 0.15
K_RANGE = (1, 16)


class MainScreen(Screen):
    BINDINGS = keys.MAIN

    AUTO_FOCUS = "#browser"

    app: Host  # type: ignore[assignment]

    def __init__(self, target: str, *, data_dir: str | None = None) -> None:
        super().__init__()
        #: what is open: user, host, port and the path given (parsed once; None: it did not parse)
        self.target: Target | None = None
        self._target_error: str | None = None
        try:
            self.target = parse_target(target)
        except TargetError as err:
            self._target_error = str(err)
        self._target_text = target
        self.source: Source | None = None
        self.where = ""
        self.path = ""
        self.generation = 0
        self.listing_done = False
        self.listing_error: str | None = None
        self.k = 5
        self.pins = ComparePins()  # the two sides of the compare view (t / i / c)
        #: (folder, step) while n/p look for a sample in the next shard folder
        self._walk: tuple[str, int] | None = None
        #: entry counts of folders listed to the end in this session (the panel shows them)
        self._counts: dict[str, int] = {}
        self.wanted: str | None = None  # the file the sample panel should show
        self.shown: str | None = None  # the file it shows
        self._debounce: Timer | None = None
        self._sample = SampleView(id="sample")  # mounted right after the first frame
        self.bookmarking = Bookmarking(data_dir, self.post_message)
        self.acceptance = acceptance.SampleAcceptance()  # --drafter results per file
        #: identified boundaries per file (I), shown again whenever that file is shown
        self.identified: dict[str, dict[str, Any]] = {}
        self.identifying: str | None = None  # the file whose identification runs
        self.debounce_seconds = DEBOUNCE_SECONDS

    def compose(self) -> ComposeResult:
        with Horizontal(id="location"):
            yield Line(id="where")
            yield Line(id="path")
            yield Line(id="count")
        with Horizontal(id="panes"):
            with Vertical(id="browser-pane"):
                yield BrowserList(id="browser")
                yield Input(placeholder="filter names…", id="filter")
            yield VerticalScroll(id="sample-pane", can_focus=False)
        yield StatusLine(id="status")
        yield Footer(compact=True)

    @property
    def browser(self) -> BrowserList:
        return self.query_one(BrowserList)

    @property
    def sample(self) -> SampleView:
        return self._sample

    def on_mount(self) -> None:
        self.query_one("#sample-pane").border_title = "sample"
        self.browser.marker = self.bookmarking.marker
        self.run_worker(self.bookmarking.open_in_thread, thread=True, group="bookmarks-open")
        self.set_interval(POLL_SECONDS, self.bookmarking.poll, name="bookmarks-poll")
        self.set_status(f"opening {self._target_label()}…")
        self._update_location()
        # the first frame comes first: the sample view (dozens of styled parts) and the
        # connection start right after it
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        pane = self.query("#sample-pane")
        if not pane or not pane.first().is_attached:
            return  # q pressed before the first frame: the app is already closing
        pane.first().mount(self._sample)
        self.connect()

    # ----- connecting

    def _target_label(self) -> str:
        return self.target.display() if self.target is not None else self._target_text

    @work(exclusive=True, group="connect")
    async def connect(self) -> None:
        app, target = self.app, self.target
        if target is None:
            self.post_message(SourceFailed(self._target_error or "no target"))
            return
        try:
            opened = await app.opener(
                target.display(),
                remote_python=app.remote_python,
                accept_new_host_key=app.accept_new_host_key,
                confirm_host_key=app.confirm_host_key,
                on_status=lambda text: self.post_message(ConnectionStatus(text)),
            )
            path, select = opened.path, None
            entry = await opened.source.stat(path)
            if entry.kind == "file":  # a file target: open its folder with the cursor on it
                path, select = parent_folder(path), posixpath.basename(path)
        except SourceError as err:
            self.post_message(SourceFailed(str(err)))
            return
        except Exception as err:  # noqa: BLE001 - any failure to connect is shown, not raised
            self.post_message(SourceFailed(f"{type(err).__name__}: {err}"))
            return
        self.post_message(SourceReady(opened.source, target.with_path(path), opened.where, select))

    def on_source_ready(self, message: SourceReady) -> None:
        self.source = message.source
        self.target = message.target
        self.where = message.where
        self.set_status("")
        self.open_folder(message.target.path, select=message.select)

    def on_source_failed(self, message: SourceFailed) -> None:
        self.listing_done = True
        self._update_location()
        self.browser.set_message(message.message, "browser--error")
        self.set_status(message.message, error=True)

    def on_connection_status(self, message: ConnectionStatus) -> None:
        self.set_status(message.text)

    # ----- listing

    def open_folder(self, path: str, select: str | None = None, *, listing: bool = True) -> None:
        if self.source is None:
            return
        self._walk = None
        if posixpath.normpath(path) != posixpath.normpath(self.path or "."):
            self._cancel_pending_load()
            self._show_entry(None)  # the file shown is not in the new folder
        self.path = path
        self.generation += 1
        self.listing_done = False
        self.listing_error = None
        self.browser.scan_marks = {}
        self.browser.reset(select=select)
        self.bookmarking.show_folder(self._place(), path)
        self._update_location()
        if listing:
            self.stream_listing(path, self.generation)
        else:
            self.workers.cancel_group(self, "listing")  # the caller brings the listing

    def reload(self) -> None:
        self.identified.clear()  # the files may have changed: I identifies them again
        if self.source is None:
            self.connect()
            return
        current = self.browser.current
        self.open_folder(self.path, select=current.name if current else None)
        if self.shown:
            self.schedule_load(self.shown, delay=0)

    @work(exclusive=True, group="listing")
    async def stream_listing(self, path: str, generation: int) -> None:
        assert self.source is not None
        await listing_stream.stream_listing(self.source, path, generation, self.post_message)

    def on_listing_page(self, message: ListingPage) -> None:
        if message.generation == self.generation:
            self.browser.set_entries(message.keys, message.entries)
            self._update_location()

    def on_listing_done(self, message: ListingDone) -> None:
        if message.generation != self.generation:
            return
        self.listing_done = True
        self.listing_error = message.error
        if not message.error:
            self._counts[posixpath.normpath(self.path)] = len(self.browser.entries)
            self.load_scan_marks()
        current = self.browser.current
        gone = self.bookmarking.listing_done(self.path, message.error, current.name if current else None)
        if gone:
            # a toast: the status line is rewritten by the cursor's own news right after this
            self.notify(gone, title="Bookmarked file gone", severity="warning", timeout=8, markup=False)
        if message.error:
            self.browser.set_message(message.error, "browser--error")
            self.set_status(message.error, error=True)
        elif not self.browser.entries:
            self.browser.set_message("(empty folder)")
        else:
            self.browser.set_message(None)
        self._update_location()

    # ----- browser events

    def on_browser_list_cursor_changed(self, message: BrowserList.CursorChanged) -> None:
        entry = message.entry
        if entry is not None:
            self.set_status(describe_entry(entry))
        if entry is not None and entry.kind == "file" and is_sample_name(entry.name):
            self.schedule_load(posixpath.join(self.path, entry.name))
        else:
            self._cancel_pending_load()
            self._show_entry(entry)

    def _show_entry(self, entry: Entry | None) -> None:
        """The panel describes what is under the cursor (or shows nothing), never an old file."""
        self.wanted = self.shown = None
        pane = self.query("#sample-pane")
        if not pane:
            return
        if entry is None:
            self.sample.clear(None)
            pane.first().border_title = "sample"
        else:
            path = posixpath.normpath(posixpath.join(self.path, entry.name))
            self.sample.clear(entry_note(entry, self._counts.get(path)))
            pane.first().border_title = escape(
                printable(entry.name) + ("/" if entry.kind == "dir" else ""))
        self._mark_loading(None)

    def on_browser_list_opened(self, message: BrowserList.Opened) -> None:
        entry = message.entry
        if entry.kind == "dir":
            self.open_folder(posixpath.join(self.path, entry.name))
        elif entry.kind == "file":  # any file, sample-like name or not: try it now
            self.schedule_load(posixpath.join(self.path, entry.name), delay=0)
        else:
            self.set_status(f"{printable(entry.name)}: a dead link or special file", error=True)

    def on_browser_list_parent_requested(self, message: BrowserList.ParentRequested) -> None:
        parent = parent_folder(self.path)
        if parent != self.path:
            self.open_folder(parent, select=posixpath.basename(self.path.rstrip("/")))

    # ----- filter

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        # focus now, not on the next tick: "/12" typed in one go must land in the box
        self.set_focus(box)

    def action_clear_filter(self) -> None:
        if self.identifying is not None:
            self._cancel_identify()
            return
        box = self.query_one("#filter", Input)
        if box.display or self.browser.filter:
            box.value = ""
            box.display = False
            self.browser.set_filter("")
            self.browser.focus()
            self._update_location()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.browser.set_filter(event.value)
        self._update_location()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        if not event.value:
            event.input.display = False
        self.browser.focus()

    # ----- sample panel

    def schedule_load(self, path: str, delay: float | None = None) -> None:
        """Load `path` once the cursor has rested on it; the shown result stays until then."""
        if delay is None:
            delay = self.debounce_seconds
        self.wanted = path
        self._mark_loading(posixpath.basename(path))
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        if delay <= 0:
            self._load_wanted()
        else:
            self._debounce = self.set_timer(delay, self._load_wanted, name="sample-debounce")

    def _mark_loading(self, name: str | None) -> None:
        """Dim the shown result and say a newer one is on its way.

        Runs on every cursor move over samples: the pane's subtitle only changes when loading
        starts or ends (repainting the whole pane per key cost more than the move itself);
        the status line names the file under the cursor.
        """
        self.sample.mark_loading(name)
        pane = self.query_one("#sample-pane")
        subtitle = "⟳ loading…" if name else ""
        if pane.border_subtitle != subtitle:
            pane.border_subtitle = subtitle

    def _cancel_pending_load(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        self.workers.cancel_group(self, "accept")
        if self.wanted != self.shown:
            self.workers.cancel_group(self, "summary")
            self.wanted = self.shown
            self._mark_loading(None)

    def _load_wanted(self) -> None:
        self._debounce = None
        self.workers.cancel_group(self, "accept")  # the drafter run of the file left behind
        if self.wanted is not None:
            self.load_summary(self.wanted, self.k)

    @work(exclusive=True, group="summary")
    async def load_summary(self, path: str, k: int) -> None:
        assert self.source is not None
        try:
            summary: dict[str, Any] = await self.source.summarize(path, k=k)
        except SourceError as err:
            summary = {"path": path, "error": str(err)}
        except Exception as err:  # noqa: BLE001 - the panel shows it; the app keeps running
            summary = {"path": path, "error": f"{type(err).__name__}: {err}"}
        self.post_message(SummaryLoaded(path, k, summary))

    def on_summary_loaded(self, message: SummaryLoaded) -> None:
        if message.path != self.wanted:
            return  # the user has moved on; a newer load is on its way
        self.shown = message.path
        if message.path in self.identified:
            from eagle3_tui.samples.identify import attach

            attach(message.summary, self.identified[message.path])
        self.sample.show(message.summary)
        self.bookmarking.summary_loaded(message.path, message.summary)
        self._mark_loading(None)
        self.query_one("#sample-pane").border_title = escape(printable(posixpath.basename(message.path)))
        self._start_acceptance(message.path, message.summary)

    # ----- the drafter's acceptance on the shown sample (--drafter; ui/widgets/acceptance.py)

    def _start_acceptance(self, path: str, summary: dict[str, Any]) -> None:
        analysis = self.app.analysis
        drafter = analysis.path_for("drafter", self.target) if self.target is not None else None
        if drafter is None or summary.get("error") or self.source is None:
            return
        model = analysis.path_for("model", self.target)
        key = acceptance.cache_key(path, drafter, model, summary=summary)
        cached = self.acceptance.get(key)
        self.sample.show_acceptance(cached or acceptance.RUNNING)
        if cached is None:
            self.run_acceptance(key)

    @work(exclusive=True, group="accept")
    async def run_acceptance(self, key: tuple) -> None:
        assert self.source is not None
        path, drafter, model = key[:3]
        self.post_message(acceptance.AcceptanceLoaded(key, await acceptance.run_accept(
            self.source, path, drafter, model)))

    def on_acceptance_loaded(self, message: acceptance.AcceptanceLoaded) -> None:
        self.acceptance.put(message.key, message.result)
        if message.key[0] == self.shown:
            self.sample.show_acceptance(message.result)

    def action_token(self, delta: int) -> None:
        self.sample.move_token(delta)

    def action_k(self, delta: int) -> None:
        k = max(K_RANGE[0], min(K_RANGE[1], self.k + delta))
        if k != self.k:
            self.k = k
            self.set_status(f"first {k} values per token")
            if self.shown:
                self.schedule_load(self.shown)

    # ----- identify (I): which boundary of the target model each slot holds

    def action_identify(self) -> None:
        path = self.shown
        if self.identifying is not None:
            self._cancel_identify()
            return
        given = self.app.analysis.model
        if not given:
            self.set_status("no target model: start eagle3-tui with --model DIR (on the data's machine)",
                            error=True)
            return
        model = self.app.analysis.path_for("model", self.target) if self.target is not None else None
        if model is None:
            self.set_status(f"--model {printable(given)} is on another machine than the data: "
                            "the model runs next to the data", error=True)
            return
        if path is None or self.source is None or self.sample.summary is None or "error" in self.sample.summary:
            self.set_status("I identifies the sample shown: move onto a sample file first", error=True)
            return
        if path in self.identified:
            self.set_status(f"{printable(posixpath.basename(path))}: identified already (r reloads the file)")
            return
        self.identifying = path
        self.query_one("#sample-pane").border_subtitle = "⟳ identifying…"
        self.set_status(f"⟳ identifying {printable(posixpath.basename(path))}: running "
                        f"{printable(posixpath.basename(model.rstrip('/')))} on {self.where}… (esc cancels)")
        self.run_identify(path, model)

    @work(exclusive=True, group="identify")
    async def run_identify(self, path: str, model: str) -> None:
        assert self.source is not None
        try:
            result = await self.source.identify(path, model=model)
        except SourceError as err:
            result = {"path": path, "model": model, "error": str(err)}
        except Exception as err:  # noqa: BLE001 - the status line shows it; the app keeps running
            result = {"path": path, "model": model, "error": f"{type(err).__name__}: {err}"}
        self.post_message(Identified(path, result))

    def on_identified(self, message: Identified) -> None:
        if message.path != self.identifying:
            return  # cancelled meanwhile
        self.identifying = None
        self.query_one("#sample-pane").border_subtitle = ""
        from eagle3_tui.samples.identify import attach, brief

        got = brief(message.result)
        name = printable(posixpath.basename(message.path))
        if "error" in got:
            text = f"{name}: not identified: {printable(str(got['error']), message=True)}"
            self.set_status(text, error=True)
            # the status line is one line: the toast wraps the whole reason
            self.notify(text, title="Identify", severity="error", timeout=10, markup=False)
            return
        self.identified[message.path] = got
        if message.path == self.shown and self.sample.summary is not None:
            self.sample.show(attach(dict(self.sample.summary), got))
        shown = ", ".join("?" if s["boundary"] is None else str(s["boundary"]) for s in got["slots"])
        self.set_status(f"{name}: slots at b {shown} (b* in the table: identified against the model)")

    def _cancel_identify(self) -> None:
        self.workers.cancel_group(self, "identify")
        self.identifying = None
        self.query_one("#sample-pane").border_subtitle = ""
        self.set_status("identification cancelled")

    # ----- the file under the cursor (what t, i, c, b and N act on)

    def file_under_cursor(self) -> str | None:
        """The file under the browser's cursor, else the sample the panel shows."""
        entry = self.browser.current
        if entry is not None and entry.kind == "file":
            return posixpath.join(self.path, entry.name)
        return self.shown

    def _place(self) -> Target | None:
        """The open target, canonical: user, host and port key the bookmarks."""
        return None if self.target is None else self.target.canonical()

    # ----- bookmarks (b, N, B)

    def action_toggle_bookmark(self) -> None:
        self.bookmarking.toggle(self.file_under_cursor(), self.sample.summary)

    def action_bookmark_note(self) -> None:
        prompt = self.bookmarking.note_prompt(self.file_under_cursor(), self.sample.summary)
        if prompt is not None:
            self.app.push_screen(*prompt)

    def action_bookmarks(self) -> None:
        listing = self.bookmarking.list_screen(self.file_under_cursor())
        if listing is not None:
            self.app.push_screen(*listing)

    def on_status_message(self, message: StatusMessage) -> None:
        message.stop()
        self.set_status(message.text, error=message.error)

    def on_store_opened(self, message: StoreOpened) -> None:
        self.bookmarking.opened(message.store)

    def on_marks_changed(self, message: MarksChanged) -> None:
        message.stop()
        self.browser.refresh()

    def on_bookmark_jump(self, message: BookmarkJump) -> None:
        """Show a bookmarked sample: open its folder, connecting to its host when needed."""
        there, here = message.folder, self._place()
        if here is not None and here.place == there.place and self.source is not None:
            self.open_folder(there.path, select=message.name)
        else:
            self.switch_target(there.with_path(posixpath.join(there.path, message.name)))

    # ----- the dataset view (D): ui/screens/dataset.py; scan marks in the browser

    def action_dataset(self) -> None:
        if self.source is None or self.target is None:
            self.set_status("nothing open to scan yet", error=True)
            return
        entry = self.browser.current
        folder = self.path
        if entry is not None and entry.kind == "dir":
            folder = posixpath.join(self.path, entry.name)
        from eagle3_tui.ui.screens.dataset import DatasetScreen

        self.app.push_screen(DatasetScreen(self.source, self.target.with_path(folder), self.where,
                                           self.post_message))

    def on_show_sample(self, message: ShowSample) -> None:
        """The dataset view opens a sample: the browser moves to it (as a bookmark jump does)."""
        self.open_folder(message.folder.path, select=message.name)

    def on_file_action(self, message: FileAction) -> None:
        """b / t in the dataset view, answered in its status line."""
        if message.what == "pin":
            place = self._place()
            pin = Pin(message.path, self.where, place.with_path(message.path) if place is not None else None)
            text, error = self.pins.pin_training(pin)
            self._show_pins()
        else:
            store = self.bookmarking.store()
            key = self.bookmarking.key_of(message.path)
            if store is None or key is None:
                text, error = "bookmarks are not available", True
            else:
                self.bookmarking.toggle(message.path, None)
                now = key in store.keys()
                text, error = ("bookmarked " if now else "bookmark removed: ") + key, False
        message.reply(StatusMessage(text, error=error))

    def on_scan_marks_wanted(self, message: ScanMarksWanted) -> None:
        self.load_scan_marks()

    def load_scan_marks(self) -> None:
        if self.source is not None and self.listing_done and not self.listing_error:
            self._scan_marks_worker(self.path, self.generation)

    @work(exclusive=True, group="scan-marks", thread=True)
    def _scan_marks_worker(self, folder: str, generation: int) -> None:
        from eagle3_tui.dataset_scan import cache_host
        from eagle3_tui.ui.dataset_marks import scan_marks

        # read here, not passed in: Textual repr()s a worker's arguments on the event loop
        # (~200 ms for 100,000 entries) and a finished thread worker stays referenced by its
        # executor thread, which kept the folder's whole listing alive after leaving it. The
        # list is replaced, never mutated; a newer folder's result is dropped by generation.
        entries = self.browser.entries
        source = self.source
        if source is None:
            return
        try:
            marks = scan_marks(cache_host(source), folder, source.host is None, entries)
        except Exception:  # noqa: BLE001 - marks are a hint; an unusable cache gives none
            marks = {}
        self.post_message(ScanMarksLoaded(generation, marks))

    def on_scan_marks_loaded(self, message: ScanMarksLoaded) -> None:
        if message.generation == self.generation and message.marks != self.browser.scan_marks:
            self.browser.scan_marks = message.marks
            self.browser.refresh()

    def switch_target(self, target: Target) -> None:
        """Open another target (a bookmark on another host): drop this source, connect anew."""
        self.workers.cancel_group(self, "listing")
        self.workers.cancel_group(self, "summary")
        self.workers.cancel_group(self, "accept")
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        old, self.source = self.source, None
        self.target = target
        label = target.display()
        self.where, self.path, self.shown, self.wanted = "", "", None, None
        self.browser.reset(message=f"connecting to {label}…")
        self.sample.clear(f"connecting to {label}…")
        self.set_status(f"opening {label}…")
        self._update_location()
        self._close_then_connect(old)

    @work(group="switch")
    async def _close_then_connect(self, old: Source | None) -> None:
        if old is not None:
            try:
                await old.close()
            except Exception:  # noqa: BLE001 - a dead connection must not keep us from the new one
                pass
        self.connect()

    # ----- app-wide actions (n/p come from the app bindings)

    def step_sample(self, step: int) -> None:
        """Next/previous sample; past the end of a shard folder (rows_0-2000), on into the
        next one in natural order (rows_2000-4000). Only the parent and the shard folders
        up to the first one holding a sample are listed, and that listing is the one shown."""
        if self._walk is not None:
            return  # the next shard folder is being looked for
        if self.browser.next_sample(step):
            return
        word = "next" if step > 0 else "previous"
        here = posixpath.basename(self.path.rstrip("/"))
        if self.source is None or not self.listing_done or shard_pattern(here) is None:
            self.set_status(f"no {word} sample file in this folder")
            return
        self._walk = (self.path, step)
        self.set_status(f"no {word} sample file in {here}: looking in the {word} shard folder…")
        self.find_shard_sample(self.path, step, self.browser.filter)

    @work(exclusive=True, group="walk")
    async def find_shard_sample(self, origin: str, step: int, text_filter: str) -> None:
        assert self.source is not None
        self.post_message(await listing_stream.find_shard_sample(self.source, origin, step, text_filter))

    def on_shards_found(self, message: ShardsFound) -> None:
        if self._walk != (message.origin, message.step) or self.path != message.origin:
            return  # the user went elsewhere meanwhile
        self._walk = None
        word = "next" if message.step > 0 else "previous"
        skipped = f" (skipped {len(message.skipped)} without samples)" if message.skipped else ""
        if message.error:
            self.set_status(message.error, error=True)
        elif message.folder is None:
            here = posixpath.basename(message.origin.rstrip("/"))
            after = "after" if message.step > 0 else "before"
            self.set_status(f"no {word} sample file in {here} nor in a shard folder {after} it{skipped}")
        else:
            # the walk's listing is shown as it is: the folder is not listed a second time
            self.open_folder(message.folder, select=message.select, listing=False)
            generation = self.generation
            self.on_listing_page(ListingPage(generation, message.keys, message.entries))
            self.on_listing_done(ListingDone(generation))

    # ----- compare (t, i, c): the pins live in ui/pins.py, the view in screens/compare.py

    def _pin_under_cursor(self) -> Pin | None:
        path = self.file_under_cursor()
        if path is None:
            return None
        place = self._place()
        return Pin(path, self.where, place.with_path(path) if place is not None else None)

    def _show_pins(self) -> None:
        bars = self.query(PinsBar)
        if not bars:
            if self.pins.empty:
                return
            self.mount(PinsBar(id="pins"), before=self.query_one("#status"))
            bars = self.query(PinsBar)
        bars.first().show(self.pins, self.where)

    def action_pin_training(self) -> None:
        text, error = self.pins.pin_training(self._pin_under_cursor())
        self._show_pins()
        self.set_status(text, error=error)

    def action_choose_inference(self) -> None:
        text, error = self.pins.choose_inference(self._pin_under_cursor())
        self._show_pins()
        self.set_status(text, error=error)

    def action_open_compare(self) -> None:
        problem = self.pins.ready(self._pin_under_cursor(), self.where, self.source is not None)
        self._show_pins()
        if problem is not None:
            self.set_status(problem[0], error=problem[1])
            return
        # the compare view is imported on first use: it is not needed for the first frame
        from eagle3_tui.ui.screens.compare import CompareScreen

        assert self.source is not None and self.pins.a is not None and self.pins.b is not None
        analysis, target = self.app.analysis, self.target
        self.app.push_screen(CompareScreen(
            self.source, self.pins.a.path, self.pins.b.path, self.where,
            drafter=analysis.path_for("drafter", target) if target is not None else None,
            model=analysis.path_for("model", target) if target is not None else None))

    def swap_pins(self) -> None:
        """The compare view swapped its sides (PinsSwapped): the pins follow."""
        self.pins.swap()
        self._show_pins()

    # ----- lines

    def set_status(self, text: str, *, error: bool = False) -> None:
        self.query_one(StatusLine).say(text, error=error)

    def _update_location(self) -> None:
        browser = self.browser
        total = len(browser.entries)
        count = f"{total:,} {'entry' if total == 1 else 'entries'}" + ("" if self.listing_done else "…")
        if browser.filter:
            count = f"{len(browser.rows):,} of {count} match /{browser.filter}"
        where = f" {self.where or '…'} "
        path = printable(self.path or self._target_label())
        room = max(8, (self.size.width or self.app.size.width) - len(where) - len(count) - 4)
        if len(path) > room:
            path = "…" + path[-(room - 1):]
        self.query_one("#where", Line).update(where)
        self.query_one("#path", Line).update(f" {path}")
        self.query_one("#count", Line).update(f"{count} ")
        self.query_one("#browser-pane").border_title = escape(
            printable(posixpath.basename(self.path.rstrip("/")) or "/"))

    def on_resize(self) -> None:
        self._update_location()
