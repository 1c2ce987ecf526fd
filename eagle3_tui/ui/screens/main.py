"""The main screen: folder browser (left), sample panel (right), location and status lines.

This screen owns the state: which source and folder are open, which listing generation is
current, which file the sample panel wants. Workers only talk to the Source and post messages.
"""

from __future__ import annotations

import asyncio
import posixpath
import re
from datetime import datetime
from time import monotonic
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input
from textual.markup import escape
from textual.worker import get_current_worker

from eagle3_tui.names import printable
from eagle3_tui.sources.base import Entry, NaturalListing, Source, SourceError
from eagle3_tui.ui.bookmarking import POLL_SECONDS, Bookmarking
from eagle3_tui.ui.format import is_sample_name
from eagle3_tui.ui.listing import merge_batch, merge_due
from eagle3_tui.ui.messages import (
    ConnectionStatus,
    ListingDone,
    ListingPage,
    ShardsFound,
    SourceFailed,
    SourceReady,
    SummaryLoaded,
)
from eagle3_tui.ui.widgets.browser import BrowserList
from eagle3_tui.ui.widgets.sample_view import SampleView
from eagle3_tui.ui.widgets.status import Line

if TYPE_CHECKING:
    from eagle3_tui.ui.app import Eagle3App

#: cursor rests this long on a sample before it is loaded (moving on cancels the load)
DEBOUNCE_SECONDS = 0.15
PAGE_SIZE = 500
#: the listing merge thread sleeps this long between chunks, giving the event loop the GIL
MERGE_PAUSE_SECONDS = 0.002
K_RANGE = (1, 16)

FILTER_KEYS = [
    ("any text", "Keep only names containing it (case-insensitive)"),
    ("enter", "Back to the list, keep the filter"),
    ("esc", "Clear the filter"),
]


def describe_entry(entry: Entry) -> str:
    """The status line for the entry under the cursor."""
    parts = [printable(entry.name) + ("/" if entry.kind == "dir" else "")]
    if entry.kind == "file" and entry.size is not None:
        parts.append(f"{entry.size:,} bytes")
    elif entry.kind == "link":
        parts.append("dead link")
    elif entry.kind == "other":
        parts.append("not a regular file")
    if entry.mtime is not None:
        parts.append("modified " + datetime.fromtimestamp(entry.mtime).strftime("%Y-%m-%d %H:%M"))
    return " · ".join(parts)


#: what the sample panel says about an entry that is not a sample (special files are never opened)
KIND_NOTES = {
    "link": "a link to nothing (dead link)",
    "other": "not a regular file (a FIFO, socket or device): never opened",
    "fifo": "a FIFO (named pipe): never opened",
    "socket": "a socket: never opened",
    "device": "a device: never opened",
}


def entry_note(entry: Entry, count: int | None) -> str:
    """What the sample panel says when the cursor is on something that is not a sample."""
    if entry.kind == "dir":
        counted = "" if count is None else f" holding {count:,} {'entry' if count == 1 else 'entries'}"
        return f"A folder{counted}: l opens it."
    if entry.kind == "file":
        size = "" if entry.size is None else f" of {entry.size:,} bytes"
        return f"A file{size} whose name is not a sample's: l tries to read it anyway."
    note = KIND_NOTES.get(entry.kind, KIND_NOTES["other"])
    return note[0].upper() + note[1:] + "."


_DIGITS = re.compile(r"\d+")


def shard_pattern(name: str) -> str | None:
    """rows_0-2000 and rows_2000-4000 share "rows_#-#"; a name without digits is no shard."""
    pattern, count = _DIGITS.subn("#", name.casefold())
    return pattern if count else None


def sample_at_end(entries: list[Entry], step: int, text_filter: str = "") -> str | None:
    """The first (step 1) or last (step -1) sample file's name among `entries` (natural order)."""
    needle = text_filter.casefold()
    for e in (entries if step > 0 else reversed(entries)):
        if e.kind == "file" and is_sample_name(e.name) and needle in e.name.casefold():
            return e.name
    return None


def parent_folder(path: str) -> str:
    """The folder above `path`. Remote paths may be relative to the login's home folder
    ("data/x", "."), whose parents are "data", "." and "..", never "/"."""
    path = path.rstrip("/") or "/"
    if path.startswith("/"):
        return posixpath.dirname(path) or "/"
    if path == ".":
        return ".."
    if posixpath.basename(path) == "..":
        return path + "/.."
    return posixpath.dirname(path) or "."


class MainScreen(Screen):
    BINDINGS = [
        Binding("t", "pin_training", "Pin A", show=False, id="main.pin_training",
                tooltip="Compare: pin this sample as the training side (A)"),
        Binding("i", "choose_inference", "Pick B", show=False, id="main.choose_inference",
                tooltip="Compare: choose this file as the inference side (B)"),
        Binding("c", "open_compare", "Compare", show=False, id="main.open_compare",
                tooltip="Compare A with B (or the file under the cursor)"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="main.clear_filter",
                tooltip="Clear the filter"),
        Binding("left_square_bracket,shift+left", "token(-1)", "Token", key_display="[ ]",
                id="sample.token_prev", tooltip="Token cursor one back"),
        Binding("right_square_bracket,shift+right", "token(1)", "Token", show=False,
                id="sample.token_next", tooltip="Token cursor one forward"),
        Binding("left_curly_bracket", "token(-16)", "Token -16", show=False,
                id="sample.token_prev16", tooltip="Token cursor 16 back"),
        Binding("right_curly_bracket", "token(16)", "Token +16", show=False,
                id="sample.token_next16", tooltip="Token cursor 16 forward"),
        Binding("plus,equals_sign", "k(1)", "k", key_display="+/-", id="sample.k_more",
                tooltip="Show one more first-k value per token"),
        Binding("minus", "k(-1)", "k", show=False, id="sample.k_fewer",
                tooltip="Show one fewer first-k value per token"),
        Binding("b", "toggle_bookmark", "Bookmark", show=False, id="main.bookmark",
                tooltip="Bookmark or unbookmark the sample under the cursor"),
        Binding("N", "bookmark_note", "Note", show=False, id="main.bookmark_note",
                tooltip="Add or edit the note of its bookmark"),
        Binding("B", "bookmarks", "Bookmarks", show=False, id="main.bookmarks",
                tooltip="Bookmarks: filter, edit, delete, jump to one"),
    ]

    AUTO_FOCUS = "#browser"

    app: Eagle3App

    def __init__(self) -> None:
        super().__init__()
        self.source: Source | None = None
        self.where = ""
        self.path = ""
        self.generation = 0
        self.listing_done = False
        self.listing_error: str | None = None
        self.k = 5
        self._pins = None  # the two sides of the compare view (t / i / c), made on first use
        #: (folder, step) while n/p look for a sample in the next shard folder
        self._walk: tuple[str, int] | None = None
        #: entry counts of folders listed to the end in this session (the panel shows them)
        self._counts: dict[str, int] = {}
        self.wanted: str | None = None  # the file the sample panel should show
        self.shown: str | None = None  # the file it shows
        self._debounce: Timer | None = None
        self._sample = SampleView(id="sample")  # mounted right after the first frame
        self.bookmarking = Bookmarking(self)
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
        yield Line(id="status")
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
        self.bookmarking.start()
        self.set_interval(POLL_SECONDS, self.bookmarking.poll, name="bookmarks-poll")
        self.set_status(f"opening {self.app.target}…")
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

    @work(exclusive=True, group="connect")
    async def connect(self) -> None:
        app = self.app
        try:
            opened = await app.opener(
                app.target,
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
        self.post_message(SourceReady(opened.source, path, opened.where, select))

    def on_source_ready(self, message: SourceReady) -> None:
        self.source = message.source
        self.where = message.where
        self.set_status("")
        self.open_folder(message.path, select=message.select)

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
        self.browser.reset(select=select)
        self.bookmarking.refresh_marks()
        self._update_location()
        if listing:
            self.stream_listing(path, self.generation)
        else:
            self.workers.cancel_group(self, "listing")  # the caller brings the listing

    def reload(self) -> None:
        if self.source is None:
            self.connect()
            return
        current = self.browser.current
        self.open_folder(self.path, select=current.name if current else None)
        if self.shown:
            self.schedule_load(self.shown, delay=0)

    @work(exclusive=True, group="listing")
    async def stream_listing(self, path: str, generation: int) -> None:
        """Read pages, merge them into natural order off the event loop, post the result.

        The first page goes out at once (the first screen); later ones are merged when they
        add a quarter to what is shown, or every half second, so the merging costs
        O(n log n) in total and a key press never waits behind it.
        """
        assert self.source is not None
        worker = get_current_worker()
        keys: list[tuple] = []
        entries: list = []
        pending: list = []
        last = monotonic()

        async def publish() -> None:
            nonlocal keys, entries, pending, last
            keys, entries = await asyncio.to_thread(
                merge_batch, keys, entries, pending, pause=MERGE_PAUSE_SECONDS)
            pending, last = [], monotonic()
            if not worker.is_cancelled:
                self.post_message(ListingPage(generation, keys, entries))

        try:
            async for page in self.source.list_pages(path, PAGE_SIZE):
                if worker.is_cancelled:
                    return
                pending.extend(page)
                if merge_due(len(pending), len(entries), PAGE_SIZE) or monotonic() - last > 0.5:
                    await publish()
            if pending:
                await publish()
        except SourceError as err:
            self.post_message(ListingDone(generation, error=str(err)))
            return
        if not worker.is_cancelled:
            self.post_message(ListingDone(generation))

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
        self.bookmarking.listing_done(self.path, message.error)
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
        if self.wanted != self.shown:
            self.workers.cancel_group(self, "summary")
            self.wanted = self.shown
            self._mark_loading(None)

    def _load_wanted(self) -> None:
        self._debounce = None
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
        self.sample.show(message.summary)
        self.bookmarking.summary_loaded(message.path, message.summary)
        self._mark_loading(None)
        self.query_one("#sample-pane").border_title = escape(printable(posixpath.basename(message.path)))

    def action_token(self, delta: int) -> None:
        self.sample.move_token(delta)

    def action_k(self, delta: int) -> None:
        k = max(K_RANGE[0], min(K_RANGE[1], self.k + delta))
        if k != self.k:
            self.k = k
            self.set_status(f"first {k} values per token")
            if self.shown:
                self.schedule_load(self.shown)

    # ----- bookmarks (b, N, B)

    def action_toggle_bookmark(self) -> None:
        self.bookmarking.toggle()

    def action_bookmark_note(self) -> None:
        self.bookmarking.edit_note()

    def action_bookmarks(self) -> None:
        self.bookmarking.open_list()

    def switch_target(self, target: str) -> None:
        """Open another target (a bookmark on another host): drop this source, connect anew."""
        self.workers.cancel_group(self, "listing")
        self.workers.cancel_group(self, "summary")
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        old, self.source = self.source, None
        self.app.target = target
        self.where, self.path, self.shown, self.wanted = "", "", None, None
        self.browser.reset(message=f"connecting to {target}…")
        self.sample.clear(f"connecting to {target}…")
        self.set_status(f"opening {target}…")
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
        parent, here = parent_folder(origin), posixpath.basename(origin.rstrip("/"))
        pattern, key = shard_pattern(here), NaturalListing.key(Entry(here, "dir"))
        skipped: list[str] = []
        try:
            siblings = [e.name for e in await self.source.list_all(parent)
                        if e.kind == "dir" and shard_pattern(e.name) == pattern]
            if step > 0:
                names = [n for n in siblings if NaturalListing.key(Entry(n, "dir")) > key]
            else:
                names = [n for n in reversed(siblings) if NaturalListing.key(Entry(n, "dir")) < key]
            for name in names:
                folder = posixpath.join(parent, name)
                entries = await self.source.list_all(folder)
                select = sample_at_end(entries, step, text_filter)
                if select is not None:
                    keys = [NaturalListing.key(e) for e in entries]
                    self.post_message(ShardsFound(origin, step, skipped, folder, keys, entries, select))
                    return
                skipped.append(name)  # no sample in it (an empty shard): on to the next
        except SourceError as err:
            self.post_message(ShardsFound(origin, step, skipped, error=str(err)))
            return
        self.post_message(ShardsFound(origin, step, skipped))

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

    # ----- compare (t, i, c): the pins and the compare view live in screens/compare.py

    # the compare view is imported on first use: it is not needed for the first frame

    @property
    def pins(self):
        if self._pins is None:
            from eagle3_tui.ui.screens.compare import ComparePins

            self._pins = ComparePins()
        return self._pins

    def action_pin_training(self) -> None:
        from eagle3_tui.ui.screens.compare import pin_training

        pin_training(self)

    def action_choose_inference(self) -> None:
        from eagle3_tui.ui.screens.compare import choose_inference

        choose_inference(self)

    def action_open_compare(self) -> None:
        from eagle3_tui.ui.screens.compare import open_compare

        open_compare(self)

    # ----- lines

    def set_status(self, text: str, *, error: bool = False) -> None:
        status = self.query_one("#status", Line)
        status.update(Text(printable(text, message=True)))
        status.set_class(error, "-error")

    def _update_location(self) -> None:
        browser = self.browser
        total = len(browser.entries)
        count = f"{total:,} {'entry' if total == 1 else 'entries'}" + ("" if self.listing_done else "…")
        if browser.filter:
            count = f"{len(browser.rows):,} of {count} match /{browser.filter}"
        where = f" {self.where or '…'} "
        path = printable(self.path or self.app.target)
        room = max(8, (self.size.width or self.app.size.width) - len(where) - len(count) - 4)
        if len(path) > room:
            path = "…" + path[-(room - 1):]
        self.query_one("#where", Line).update(Text(where))
        self.query_one("#path", Line).update(Text(f" {path}"))
        self.query_one("#count", Line).update(Text(f"{count} "))
        self.query_one("#browser-pane").border_title = escape(
            printable(posixpath.basename(self.path.rstrip("/")) or "/"))

    def on_resize(self) -> None:
        self._update_location()
