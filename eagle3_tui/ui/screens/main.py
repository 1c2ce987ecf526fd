"""The main screen: folder browser (left), sample panel (right), location and status lines.

This screen owns the state: which target (a parsed Target) and source are open, which folder,
which listing generation is current, which file the sample panel wants, the compare pins and
the bookmarks. The sample pane (ui/widgets/sample_pane.py) owns the sample shown: the screen
tells it which file to follow and what is open. Workers (ui/listing_stream.py) only talk to the
Source and post messages; the helpers it holds (Bookmarking, ComparePins) are state that posts
or returns what to show. The app is known only through the narrow `Host` interface below.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any, Protocol

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.markup import escape
from textual.screen import Screen
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
    ListingDone,
    ListingPage,
    MarksChanged,
    ShardsFound,
    SourceFailed,
    SourceReady,
    StatusMessage,
    StoreOpened,
)
from eagle3_tui.ui.paths import describe_entry, entry_note, parent_folder, shard_pattern
from eagle3_tui.ui.pins import ComparePins
from eagle3_tui.ui.screens.main_dataset import DatasetLinks
from eagle3_tui.ui.screens.main_pins import ComparePinning
from eagle3_tui.ui.widgets.browser import BrowserList
from eagle3_tui.ui.widgets.sample_pane import SamplePane
from eagle3_tui.ui.widgets.sample_view import SampleView
from eagle3_tui.ui.widgets.status import Line, StatusLine


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


class MainScreen(DatasetLinks, ComparePinning, Screen):
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
        self.pane = SamplePane(self.set_status, id="sample-pane")  # the sample shown, right
        self.bookmarking = Bookmarking(data_dir, self.post_message)

    def compose(self) -> ComposeResult:
        with Horizontal(id="location"):
            yield Line(id="where")
            yield Line(id="path")
            yield Line(id="count")
        with Horizontal(id="panes"):
            with Vertical(id="browser-pane"):
                yield BrowserList(id="browser")
                yield Input(placeholder="filter names…", id="filter")
            yield self.pane
        yield StatusLine(id="status")
        yield Footer(compact=True)

    @property
    def browser(self) -> BrowserList:
        return self.query_one(BrowserList)

    @property
    def sample(self) -> SampleView:
        return self.pane.view

    # what the tests and the app read of the pane, by their old names
    @property
    def shown(self) -> str | None:
        return self.pane.shown

    @property
    def identifying(self) -> str | None:
        return self.pane.identifying

    @property
    def debounce_seconds(self) -> float:
        return self.pane.debounce_seconds

    @debounce_seconds.setter
    def debounce_seconds(self, seconds: float) -> None:
        self.pane.debounce_seconds = seconds

    def on_mount(self) -> None:
        self.pane.border_title = "sample"
        self.browser.marker = self.bookmarking.marker
        self.run_worker(self.bookmarking.open_in_thread, thread=True, group="bookmarks-open")
        self.set_interval(POLL_SECONDS, self.bookmarking.poll, name="bookmarks-poll")
        self.set_status(f"opening {self._target_label()}…")
        self._update_location()
        # the first frame comes first: the sample view (dozens of styled parts) and the
        # connection start right after it
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        if not self.pane.is_attached:
            return  # q pressed before the first frame: the app is already closing
        self.pane.mount_parts()
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
        self.pane.place(self.source, self.target, self.where)
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
            self.pane.cancel_pending()
            self.pane.show_entry(None)  # the file shown is not in the new folder
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
        self.pane.identified.clear()  # the files may have changed: I identifies them again
        if self.source is None:
            self.connect()
            return
        current = self.browser.current
        self.open_folder(self.path, select=current.name if current else None)
        if self.pane.shown:
            self.pane.follow(self.pane.shown, delay=0)

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
            self.pane.follow(posixpath.join(self.path, entry.name))
        else:
            self.pane.cancel_pending()
            self._show_entry(entry)

    def _show_entry(self, entry: Entry | None) -> None:
        """The pane describes what is under the cursor (or shows nothing), never an old file."""
        if entry is None:
            self.pane.show_entry(None)
            return
        path = posixpath.normpath(posixpath.join(self.path, entry.name))
        self.pane.show_entry(entry_note(entry, self._counts.get(path)),
                             printable(entry.name) + ("/" if entry.kind == "dir" else ""))

    def on_browser_list_opened(self, message: BrowserList.Opened) -> None:
        entry = message.entry
        if entry.kind == "dir":
            self.open_folder(posixpath.join(self.path, entry.name))
        elif entry.kind == "file":  # any file, sample-like name or not: try it now
            self.pane.follow(posixpath.join(self.path, entry.name), delay=0)
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
        if self.pane.identifying is not None:
            self.pane.cancel_identify()
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

    # ----- sample pane

    def schedule_load(self, path: str, delay: float | None = None) -> None:
        """Show `path` in the pane once the cursor has rested on it."""
        self.pane.follow(path, delay)

    def on_sample_pane_shown(self, message: SamplePane.Shown) -> None:
        self.bookmarking.summary_loaded(message.path, message.summary)

    def action_token(self, delta: int) -> None:
        self.pane.move_token(delta)

    def action_k(self, delta: int) -> None:
        self.pane.change_k(delta)

    def action_identify(self) -> None:
        self.pane.identify()

    # ----- the file under the cursor (what t, i, c, b and N act on)

    def file_under_cursor(self) -> str | None:
        """The file under the browser's cursor, else the sample the panel shows."""
        entry = self.browser.current
        if entry is not None and entry.kind == "file":
            return posixpath.join(self.path, entry.name)
        return self.pane.shown

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

    def switch_target(self, target: Target) -> None:
        """Open another target (a bookmark on another host): drop this source, connect anew."""
        self.workers.cancel_group(self, "listing")
        old, self.source = self.source, None
        self.target = target
        label = target.display()
        self.where, self.path = "", ""
        self.pane.place(None, target, "")
        self.browser.reset(message=f"connecting to {label}…")
        self.pane.reset(f"connecting to {label}…")
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
