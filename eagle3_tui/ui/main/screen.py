"""The main screen: folder pane (left), sample pane (right), location and status lines.

This screen routes: it holds what is open (a parsed Target and its Source, where it runs), the
compare pins and the bookmarks, and passes the rest on. The folder pane (ui/browser/folder_pane.py)
owns the listing, the filter and the shard walk; the sample pane (ui/sample/pane.py) owns
the sample shown, its loading, acceptance and identification. Their workers post messages; the
ones that concern more than one part bubble here and are routed. The helpers it holds
(Bookmarking, ComparePins) are state that posts or returns what to show; its parts (the
connection, t / i / c, e / y, enter on a text file, P) are objects it holds, each seeing the
screen through a Protocol (ui/main/host.py and theirs); its key actions delegate to them. The app
is known only through the narrow `Host` interface there.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from functools import partial
from typing import ClassVar, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import Input

from eagle3_tui.engines.read import torch_gate
from eagle3_tui.names import printable
from eagle3_tui.sources.base import Source
from eagle3_tui.target import Target
from eagle3_tui.ui import keys
from eagle3_tui.ui.bookmarks.bookmarking import POLL_SECONDS, Bookmarking
from eagle3_tui.ui.bookmarks.messages import BookmarkJump, MarksChanged, StoreOpened
from eagle3_tui.ui.browser.browser import BrowserList
from eagle3_tui.ui.browser.folder_pane import FolderPane
from eagle3_tui.ui.browser.messages import ListingDone, ListingPage, ShardsFound
from eagle3_tui.ui.browser.paths import describe_entry, parent_folder
from eagle3_tui.ui.browser.pins import ComparePins, PinsBar
from eagle3_tui.ui.dataset import kept as kept_dataset
from eagle3_tui.ui.dataset.messages import FileAction, ScanMarksWanted, ShowSample
from eagle3_tui.ui.dataset.source import dataset_source
from eagle3_tui.ui.main.connecting import Connecting
from eagle3_tui.ui.main.exporting import SampleExporter
from eagle3_tui.ui.main.host import Host
from eagle3_tui.ui.main.messages import SourceFailed, SourceReady
from eagle3_tui.ui.main.pairing import Pairing
from eagle3_tui.ui.main.pinning import Pinning
from eagle3_tui.ui.main.text_opening import TextOpener
from eagle3_tui.ui.sample.pane import SamplePane
from eagle3_tui.ui.sample.view import SampleView
from eagle3_tui.ui.shared.format import is_sample_name
from eagle3_tui.ui.shared.forwarded import Forwarded
from eagle3_tui.ui.shared.messages import StatusMessage
from eagle3_tui.ui.shared.status import KeysFooter, Line, StatusLine
from eagle3_tui.ui.start import analysis_check
from eagle3_tui.ui.start.runtime_tag import pickle_line, runtime_tags

__all__ = ["MainScreen", "parent_folder"]

class MainScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [*keys.MAIN]
    AUTO_FOCUS = "#browser"

    # the folder pane's state and the sample pane's, by the names the app and the tests use
    browser: Forwarded[BrowserList] = Forwarded("folder")
    path: Forwarded[str] = Forwarded("folder")
    listing_done: Forwarded[bool] = Forwarded("folder")
    step_sample: Forwarded[Callable[[int], None]] = Forwarded("folder")
    sample: Forwarded[SampleView] = Forwarded("pane", "view")
    shown: Forwarded[str | None] = Forwarded("pane")
    identifying: Forwarded[str | None] = Forwarded("pane")
    debounce_seconds: Forwarded[float] = Forwarded("pane")
    schedule_load: Forwarded[Callable[..., None]] = Forwarded("pane", "follow")

    def __init__(self, target: str, *, data_dir: str | None = None) -> None:
        super().__init__()
        self.connector = Connecting(self, target)
        #: what is open: user, host, port and the path given (parsed once; None: it did not parse)
        self.target: Target | None = self.connector.parse()
        self.source: Source | None = None
        self.where = ""
        self.pins = ComparePins()  # the two sides of the compare view (t / i / c)
        self.status_line = StatusLine(id="status")
        self.folder = FolderPane(self.status_line.say, id="browser-pane")  # the folder listed, left
        self.pane = SamplePane(self.status_line.say, id="sample-pane")  # the sample shown, right
        self.bookmarking = Bookmarking(data_dir, self.post_message, start=self.target)
        self.exporter = SampleExporter(self)  # e, y
        self.text_opener = TextOpener(self)  # enter on a file not named like a sample
        self.pairing = Pairing(self)  # P
        self.pinning = Pinning(self, lambda: PinsBar.show_in(self, self.pins, self.where, before="#status"))  # t, i, c

    def compose(self) -> ComposeResult:
        with Horizontal(id="location"):
            yield Line(id="where")
            yield Line(id="path")
            yield Line(id="count")
        with Horizontal(id="panes"):
            yield self.folder
            yield self.pane
        yield self.status_line
        yield KeysFooter(compact=True)

    def on_mount(self) -> None:
        self.pane.border_title = "sample"
        self.browser.marker = self.bookmarking.marker
        self.run_worker(self.bookmarking.open_in_thread, thread=True, group="bookmarks-open")
        self.set_interval(POLL_SECONDS, self.bookmarking.poll, name="bookmarks-poll")
        self.status_line.say(f"opening {self.connector.label()}…")
        self._update_location()
        # the first frame comes first: the sample view (dozens of styled parts) and the
        # connection start right after it
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        if not self.pane.is_attached:
            return  # q pressed before the first frame: the app is already closing
        self.pane.mount_parts()
        self.connector.connect()

    # ----- connecting (ui/main/connecting.py)

    def on_source_ready(self, message: SourceReady) -> None:
        self.source = message.source
        self.target = message.target
        self.where = message.where
        self.folder.place(self.source)
        self.pane.place(self.source, self.target, self.where)
        self.status_line.say(pickle_line(self.source) or "", error=pickle_line(self.source) is not None)
        self.open_folder(message.target.path, select=message.select)

    def on_source_failed(self, message: SourceFailed) -> None:
        self.listing_done = True
        self._update_location()
        self.browser.set_message(message.message, "browser--error")
        self.status_line.say(message.message, error=True)

    def switch_target(self, target: Target) -> None:
        """Open another target (a bookmark on another host): drop this source, connect anew."""
        old, self.source = self.source, None
        self.folder.place(None)
        self.target = target
        label = target.display()
        self.where, self.path = "", ""
        self.pane.place(None, target, "")
        self.browser.reset(message=f"connecting to {label}…")
        self.pane.reset(f"connecting to {label}…")
        self.status_line.say(f"opening {label}…")
        self._update_location()
        self.connector.close_then_connect(old)

    # ----- folders (the folder pane's workers post these; they concern the whole screen)

    def open_folder(self, path: str, select: str | None = None, *, listing: bool = True) -> None:
        if self.source is None:
            return
        if posixpath.normpath(path) != posixpath.normpath(self.path or "."):
            self.pane.cancel_pending()
            self.pane.show_entry(None)  # the file shown is not in the new folder
        self.folder.open(path, select, listing=listing)
        self.bookmarking.show_folder(self.canonical_target(), path)
        self._update_location()

    def reload(self) -> None:
        self.pane.identified.clear()  # the files may have changed: I identifies them again
        if self.source is None:
            self.connector.connect()
            return
        current = self.browser.current
        self.open_folder(self.path, select=current.name if current else None)
        if self.pane.shown:
            self.pane.follow(self.pane.shown, delay=0)

    def on_listing_page(self, message: ListingPage) -> None:
        if self.folder.page(message):
            self._update_location()

    def on_listing_done(self, message: ListingDone) -> None:
        if not self.folder.done(message):
            return
        current = self.browser.current
        gone = self.bookmarking.listing_done(self.path, message.error, current.name if current else None)
        if gone:
            # a toast: the status line is rewritten by the cursor's own news right after this
            self.notify(gone, title="Bookmarked file gone", severity="warning", timeout=8, markup=False)
        self.folder.show_outcome()
        self._update_location()

    def on_shards_found(self, message: ShardsFound) -> None:
        """n/p found the next shard folder: its listing is shown as it is, not listed again."""
        if self.folder.walk_ended(message):
            assert message.folder is not None
            self.open_folder(message.folder, select=message.select, listing=False)
            generation = self.folder.generation
            self.on_listing_page(ListingPage(generation, message.keys, message.entries))
            self.on_listing_done(ListingDone(generation))

    # ----- browser events

    def on_browser_list_cursor_changed(self, message: BrowserList.CursorChanged) -> None:
        entry = message.entry
        if entry is not None:
            self.status_line.say(describe_entry(entry))
        if entry is not None and entry.kind == "file" and is_sample_name(entry.name):
            self.pane.follow(posixpath.join(self.path, entry.name))
            return
        self.pane.cancel_pending()
        # the pane describes what is under the cursor (or shows nothing), never an old file
        if entry is None:
            self.pane.show_entry(None)
        else:
            self.pane.show_entry(*self.folder.describe(entry))

    def on_browser_list_opened(self, message: BrowserList.Opened) -> None:
        entry = message.entry
        if entry.kind == "dir":
            self.open_folder(posixpath.join(self.path, entry.name))
        elif entry.kind == "file":  # any file: a sample now, or a text file in the viewer
            self.text_opener.open(posixpath.join(self.path, entry.name))
        else:
            self.status_line.say(f"{printable(entry.name)}: a dead link or special file", error=True)

    def on_browser_list_parent_requested(self, message: BrowserList.ParentRequested) -> None:
        parent = parent_folder(self.path)
        if parent != self.path:
            self.open_folder(parent, select=posixpath.basename(self.path.rstrip("/")))

    def action_filter(self) -> None:
        self.folder.show_filter()

    def action_clear_filter(self) -> None:
        if self.pairing.cancel():
            return
        if self.pane.identifying is not None:
            self.pane.cancel_identify()
        elif self.folder.clear_filter():
            self._update_location()
        else:
            kept_dataset.back_to(self.app, None, partial(kept_dataset.closed, self))  # after enter in D: back to it

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.browser.set_filter(event.value)
        self._update_location()

    # ----- the sample pane

    def on_sample_pane_shown(self, message: SamplePane.Shown) -> None:
        self.bookmarking.summary_loaded(message.path, message.summary)

    def action_token(self, delta: int) -> None:
        self.pane.move_token(delta)

    def action_k(self, delta: int) -> None:
        self.pane.change_k(delta)

    def action_identify(self) -> None:
        self.pane.identify()

    # ----- e, y (ui/main/exporting.py) and P (ui/main/pairing.py)

    def action_export(self) -> None:
        self.exporter.export()

    def action_copy_report(self) -> None:
        self.exporter.copy()

    def action_pair_capture(self) -> None:
        self.pairing.start()

    # ----- the file under the cursor (what t, i, c, b and N act on)

    def file_under_cursor(self) -> str | None:
        """The file under the browser's cursor, else the sample the panel shows."""
        return self.folder.file_under_cursor() or self.pane.shown

    def canonical_target(self) -> Target | None:
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
        self.status_line.say(message.text, error=message.error or torch_gate.refused(message.text))
        self._update_location()  # the agent's hello names the box's Python and torch

    def on_store_opened(self, message: StoreOpened) -> None:
        self.bookmarking.opened(message.store)

    def on_marks_changed(self, message: MarksChanged) -> None:
        message.stop()
        self.browser.refresh()

    def on_bookmark_jump(self, message: BookmarkJump) -> None:
        """Show a bookmarked sample: open its folder, connecting to its host when needed."""
        there, here = message.folder, self.canonical_target()
        if here is not None and here.place == there.place and self.source is not None:
            self.open_folder(there.path, select=message.name)
        else:
            self.switch_target(there.with_path(posixpath.join(there.path, message.name)))

    # ----- compare pins (t, i, c; ui/browser/pins.py holds their rules, ui/compare/screen.py the view)

    def action_pin_training(self) -> None:
        self.pinning.pin_training()

    def action_choose_inference(self) -> None:
        self.pinning.choose_inference()

    def action_open_compare(self) -> None:
        self.pinning.open_compare()

    def swap_pins(self) -> None:
        """The compare view swapped its sides (PinsSwapped): the pins follow."""
        self.pinning.swap()

    # ----- the dataset view (D; ui/dataset/screen.py): its enter, b and t come back here

    def action_dataset(self) -> None:
        if self.source is None or self.target is None:
            self.status_line.say("nothing open to scan yet", error=True)
            return
        entry = self.browser.current
        folder = posixpath.join(self.path, entry.name) if entry is not None and entry.kind == "dir" else self.path
        data = self.target.with_path(folder)
        if kept_dataset.back_to(self.app, data, partial(kept_dataset.closed, self)):
            return  # the view left by enter on a file, as it was
        from eagle3_tui.ui.dataset.screen import DatasetScreen  # lazy: a view opened only on D
        host = cast("Host", self.app)  # the Eagle3App, which the screens do not import
        analysis = host.analysis  # --model names the layers (on the data's machine only)
        # a drafter start-up found unusable runs no acceptance here either (it would fail on, and
        # mark, the data files); the view says why. Its config still serves the layers and serve-check
        off = analysis_check.acceptance_off(self.pane.unusable)
        self.app.push_screen(DatasetScreen(dataset_source(host, self.source, data), data, self.where, self.post_message,
                                           model=analysis.path_for("model", data),
                                           drafter=analysis.path_for("drafter", data), model_given=analysis.model,
                                           accept_off=f"acceptance {off['error']}" if off and analysis.drafter else None),
                             callback=partial(kept_dataset.closed, self))

    def on_show_sample(self, message: ShowSample) -> None:
        """The dataset view opens a file: the browser moves to it (as a bookmark jump does), and
        a file whose name is not a sample's opens as text when it is text (as l does)."""
        self.open_folder(message.folder.path, select=message.name)
        if not is_sample_name(message.name):
            self.text_opener.open(posixpath.join(message.folder.path, message.name))

    def on_file_action(self, message: FileAction) -> None:
        """b / t in the dataset view, answered in its status line."""
        if message.what == "pin":
            text, error = self.pins.pin_training(self.pinning.at(message.path))
            self.pinning.say(None)
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
        self.folder.load_scan_marks()

    # ----- lines

    def _update_location(self) -> None:
        browser = self.browser
        total = len(browser.entries)
        count = f"{total:,} {'entry' if total == 1 else 'entries'}" + ("" if self.listing_done else "…")
        if browser.filter:
            count = f"{len(browser.rows):,} of {count} match /{browser.filter}"
        path = printable(self.path or self.connector.label())
        for tag in runtime_tags(self.source):
            where = f" {self.where or '…'}{tag} "
            room = max(8, (self.size.width or self.app.size.width) - len(where) - len(count) - 4)
            if len(path) <= room:
                break
        if len(path) > room:
            path = "…" + path[-(room - 1):]
        self.query_one("#where", Line).update(where)
        self.query_one("#path", Line).update(f" {path}")
        self.query_one("#count", Line).update(f"{count} ")
        self.query_one("#browser-pane").border_title = escape(
            printable(posixpath.basename(self.path.rstrip("/")) or "/"))

    def on_resize(self) -> None:
        self._update_location()
