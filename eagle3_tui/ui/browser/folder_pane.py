"""The folder pane: the left half of the main screen, the folder's entries (BrowserList) with the
filter box under them.

It owns which folder is listed and which listing generation is current, the counts of folders
listed to the end, n/p's walk into the next shard folder and the marks a scan left on the files
(ui/browser/scan_marks.py). Its workers (ui/browser/listing_stream.py) post ListingPage, ListingDone and
ShardsFound, which bubble to the screen: the screen routes them back here (`page`, `done`,
`walk_ended`) and then updates what else follows a folder (location line, bookmarks, sample).
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from textual import on, work
from textual.containers import Vertical
from textual.widgets import Input

from eagle3_tui.names import printable
from eagle3_tui.ui.browser import listing_stream
from eagle3_tui.ui.browser.browser import BrowserList
from eagle3_tui.ui.browser.messages import ListingDone, ListingPage, ScanMarksLoaded, ShardsFound
from eagle3_tui.ui.browser.paths import entry_note, shard_pattern
from eagle3_tui.ui.browser.scan_marks import scan_marks

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.app import ComposeResult

    from eagle3_tui.sources.base import Entry, Source


class FolderPane(Vertical):
    """The folder listed, its filter, the shard walk and the scan marks."""

    def __init__(self, say: Callable[..., None], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.say = say  # the screen's status line: say(text, error=False)
        self.source: Source | None = None
        self.path = ""
        self.generation = 0
        self.listing_done = False
        self.listing_error: str | None = None
        #: (folder, step) while n/p look for a sample in the next shard folder
        self._walk: tuple[str, int] | None = None
        #: entry counts of folders listed to the end in this session (the sample pane shows them)
        self._counts: dict[str, int] = {}
        #: the filter typed in each folder left with one (a filter belongs to its folder)
        self._filters: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield BrowserList(id="browser")
        yield Input(placeholder="filter names…", id="filter")

    @property
    def browser(self) -> BrowserList:
        return self.query_one(BrowserList)

    def place(self, source: Source | None) -> None:
        """What is open (None: nothing, another target is on its way: the listing stops)."""
        self.source = source
        if source is None:
            self.workers.cancel_group(self, "listing")

    # ----- listing

    def open(self, path: str, select: str | None = None, *, listing: bool = True) -> None:
        """List `path` (listing=False: the caller brings the listing), cursor on `select`.

        The filter belongs to the folder it was typed in: another folder gets its own (none, or
        the one left there). n/p's walk into the next shard folder (listing=False) keeps it: it
        found a file matching it there. A filter that would hide `select` is dropped: a jump to
        a file (a bookmark, the dataset view) lands on that file."""
        self._walk = None
        text = self._filter_for(path, select) if listing else self.browser.filter
        self.path = path
        self.generation += 1
        self.listing_done = False
        self.listing_error = None
        self.browser.scan_marks = {}
        self.browser.reset(select=select)
        if text != self.browser.filter:
            self._set_filter_box(text)  # on the empty listing: no cursor news of the old folder
        if listing:
            self.stream_listing(path, self.generation)
        else:
            self.workers.cancel_group(self, "listing")

    @work(exclusive=True, group="listing")
    async def stream_listing(self, path: str, generation: int) -> None:
        assert self.source is not None
        await listing_stream.stream_listing(self.source, path, generation, self.post_message)

    def page(self, message: ListingPage) -> bool:
        """A page of the listing; False: of an older folder, dropped."""
        if message.generation != self.generation:
            return False
        self.browser.set_entries(message.keys, message.entries)
        return True

    def done(self, message: ListingDone) -> bool:
        """The listing ended (with an error or not); False: an older folder's, dropped."""
        if message.generation != self.generation:
            return False
        self.listing_done = True
        self.listing_error = message.error
        if not message.error:
            self._counts[posixpath.normpath(self.path)] = len(self.browser.entries)
            self.load_scan_marks()
        return True

    def show_outcome(self) -> None:
        """What the browser says once the listing ended: its error, empty, or nothing."""
        if self.listing_error and self.browser.entries:
            # part of the folder is shown: the cursor's news would overwrite a status line
            shown = len(self.browser.entries)
            self.notify(f"the listing stopped after {shown:,} entries: {self.listing_error}",
                        title="Folder listed in part", severity="error", timeout=15, markup=False)
        elif self.listing_error:
            self.browser.set_message(self.listing_error, "browser--error")
            self.say(self.listing_error, error=True)
        elif not self.browser.entries:
            self.browser.set_message("(empty folder)")
        else:
            self.browser.set_message(None)

    def describe(self, entry: Entry) -> tuple[str, str]:
        """What the sample pane says of a non-sample entry, and its title."""
        path = posixpath.normpath(posixpath.join(self.path, entry.name))
        return (entry_note(entry, self._counts.get(path)),
                printable(entry.name) + ("/" if entry.kind == "dir" else ""))

    def file_under_cursor(self) -> str | None:
        entry = self.browser.current
        if entry is not None and entry.kind == "file":
            return posixpath.join(self.path, entry.name)
        return None

    # ----- n/p past the end of a shard folder

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
            self.say(f"no {word} sample file in this folder")
            return
        self._walk = (self.path, step)
        self.say(f"no {word} sample file in {here}: looking in the {word} shard folder…")
        self.find_shard_sample(self.path, step, self.browser.filter)

    @work(exclusive=True, group="walk")
    async def find_shard_sample(self, origin: str, step: int, text_filter: str) -> None:
        assert self.source is not None
        self.post_message(await listing_stream.find_shard_sample(self.source, origin, step, text_filter))

    def walk_ended(self, message: ShardsFound) -> bool:
        """The walk came back; True: the screen opens `message.folder` with its listing."""
        if self._walk != (message.origin, message.step) or self.path != message.origin:
            return False  # the user went elsewhere meanwhile
        self._walk = None
        word = "next" if message.step > 0 else "previous"
        skipped = f" (skipped {len(message.skipped)} without samples)" if message.skipped else ""
        if message.error:
            self.say(message.error, error=True)
        elif message.folder is None:
            here = posixpath.basename(message.origin.rstrip("/"))
            after = "after" if message.step > 0 else "before"
            self.say(f"no {word} sample file in {here} nor in a shard folder {after} it{skipped}")
        return not message.error and message.folder is not None

    # ----- filter

    def show_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.can_focus = True
        # focus now, not on the next tick: "/12" typed in one go must land in the box
        self.screen.set_focus(box)

    def _filter_for(self, path: str, select: str | None) -> str:
        """The filter `path` is listed with; the one of the folder left is kept for it."""
        here, there = posixpath.normpath(self.path or "."), posixpath.normpath(path)
        if here != there:
            if self.browser.filter:
                self._filters[here] = self.browser.filter
            else:
                self._filters.pop(here, None)
        text = self._filters.pop(there, "") if here != there else self.browser.filter
        if text and select is not None and text.casefold() not in select.casefold():
            return ""
        return text

    def _set_filter_box(self, text: str) -> None:
        """Show `text` as the kept filter (empty: none), the browser filtered by it."""
        box = self.query_one("#filter", Input)
        with box.prevent(Input.Changed):
            box.value = text
        box.display = bool(text)
        box.can_focus = False  # kept, not being typed in: tab goes past it
        if box.has_focus:
            self.browser.focus()
        self.browser.set_filter(text)

    def clear_filter(self) -> bool:
        """Empty and hide the filter box; False: there was none."""
        box = self.query_one("#filter", Input)
        if not (box.display or self.browser.filter):
            return False
        with box.prevent(Input.Changed):
            box.value = ""
        box.display = False
        box.can_focus = False
        self.browser.set_filter("")
        self.browser.focus()
        return True

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        if not event.value:
            event.input.display = False
        # kept, not being typed in: tab goes past it to the token table (/ edits it again)
        event.input.can_focus = False
        self.browser.focus()

    # ----- the marks of a scan (one cache query per listing, in a thread)

    def load_scan_marks(self) -> None:
        if self.source is not None and self.listing_done and not self.listing_error:
            self._scan_marks_worker(self.path, self.generation)

    @work(exclusive=True, group="scan-marks", thread=True)
    def _scan_marks_worker(self, folder: str, generation: int) -> None:
        from eagle3_tui.dataset.stream import cache_host  # lazy: the record cache (sqlite3), in this worker

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
        message.stop()
        if message.generation == self.generation and message.marks != self.browser.scan_marks:
            self.browser.scan_marks = message.marks
            self.browser.refresh()
