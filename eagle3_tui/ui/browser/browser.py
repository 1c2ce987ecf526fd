"""The folder listing: a Line API view, so 100,000 entries cost only the rows on screen.

Entries arrive in pages (arrival order) and are merged into natural order by NaturalListing.
The cursor stays on the entry it is on while new entries sort in around it; until the user
moves, it stays on the first row so the first screen reads from the top.
"""

from __future__ import annotations

import textwrap
from bisect import bisect_left
from collections.abc import Callable
from typing import ClassVar, Protocol, runtime_checkable

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import BindingType
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from eagle3_tui.names import printable
from eagle3_tui.sources.base import Entry
from eagle3_tui.ui import keys
from eagle3_tui.ui.browser.listing import merge_batch, sort_key
from eagle3_tui.ui.shared.format import human_size, is_sample_name
from eagle3_tui.ui.shared.styled_view import StyledScrollView

SIZE_WIDTH = 6
MARKER_WIDTH = 2
#: the second marker cell: what a dataset scan found in the file
SCAN_GLYPH = {"ok": "✓", "warning": "!", "error": "✗"}


@runtime_checkable
class Filters(Protocol):
    """A screen whose filter box `/` opens (the main screen)."""

    def action_filter(self) -> None: ...


class BrowserList(StyledScrollView, can_focus=True):
    """Entries of one folder. Posts CursorChanged / Opened / ParentRequested; does no I/O."""

    COMPONENT_CLASSES = {
        "browser--dir",
        "browser--sample",
        "browser--file",
        "browser--link",
        "browser--size",
        "browser--cursor",
        "browser--marker",
        "browser--match",
        "browser--message",
        "browser--error",
        "browser--scan-ok",
        "browser--scan-warning",
        "browser--scan-error",
    }

    BINDINGS: ClassVar[list[BindingType]] = [*keys.BROWSER]

    class CursorChanged(Message):
        def __init__(self, browser: BrowserList, entry: Entry | None) -> None:
            super().__init__()
            self.browser = browser
            self.entry = entry

    class Opened(Message):
        def __init__(self, browser: BrowserList, entry: Entry) -> None:
            super().__init__()
            self.browser = browser
            self.entry = entry

    class ParentRequested(Message):
        pass

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.keys: list[tuple] = []  # sort keys of `entries`
        self.entries: list[Entry] = []  # the folder in natural order (replaced, never mutated)
        self.filter = ""
        self._filtered: list[Entry] | None = None
        self.cursor = 0
        self._moved = False  # has the user moved the cursor in this folder?
        self._select: str | None = None  # name to put the cursor on when it arrives
        self.message: tuple[str, str] | None = ("Loading…", "browser--message")
        #: name -> short marker (e.g. a bookmark sign); None leaves the column blank
        self.marker: Callable[[Entry], str | None] | None = None
        #: name -> "ok" | "warning" | "error" from dataset scans (drawn after the bookmark marker)
        self.scan_marks: dict[str, str] = {}

    # ----- state changes (called by the screen's handlers)

    @property
    def rows(self) -> list[Entry]:
        return self.entries if self._filtered is None else self._filtered

    @property
    def current(self) -> Entry | None:
        visible = self.rows
        return visible[self.cursor] if 0 <= self.cursor < len(visible) else None

    def reset(self, select: str | None = None, message: str = "Loading…") -> None:
        """Forget the listing (a new folder, or a reload)."""
        self.keys, self.entries = [], []
        self._filtered = [] if self.filter else None
        self.cursor = 0
        self._moved = False
        self._select = select
        self.message = (message, "browser--message")
        self._update_size()
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    def set_entries(self, keys: list[tuple], entries: list[Entry]) -> None:
        """Show a new, larger listing (sorted by the worker), keeping the cursor's entry."""
        before = self.current
        self.keys, self.entries = keys, entries
        if self._filtered is not None:
            self._filtered = [e for e in entries if self._matches(e)]
        if self._select is not None:
            target = self._find(self._select)
            if target is not None:
                self._select = None
                self._moved = True
                self._place_cursor(target)
        elif self._moved and before is not None:
            self._place_cursor(before)
        self._update_size()
        self.refresh()
        if self.current is not before:
            self.post_message(self.CursorChanged(self, self.current))

    def add_entries(self, page: list[Entry]) -> None:
        """Merge a page in arrival order (small listings and tests; the screen uses set_entries)."""
        self.set_entries(*merge_batch(self.keys, self.entries, page))

    def set_message(self, text: str | None, component: str = "browser--message") -> None:
        """A line shown when the folder has no rows (loading, empty, or an error)."""
        self.message = (text, component) if text else None
        self.refresh()

    def set_filter(self, text: str) -> None:
        before = self.current
        old = self.filter
        self.filter = text
        if not text:
            self._filtered = None
        else:
            # a longer filter can only narrow the previous matches: no need to rescan everything
            pool = self._filtered if self._filtered is not None and old and old in text else None
            self._filtered = [e for e in (pool if pool is not None else self.entries)
                              if self._matches(e)]
        if before is not None and self._moved:
            self._place_cursor(before)
        else:
            self.cursor = 0
        self.cursor = max(0, min(self.cursor, len(self.rows) - 1))
        self._update_size()
        self._scroll_cursor_into_view()
        self.refresh()
        if self.current is not before:
            self.post_message(self.CursorChanged(self, self.current))

    def move_to(self, index: int) -> None:
        visible = self.rows
        if not visible:
            return
        index = max(0, min(index, len(visible) - 1))
        self._moved = True
        if index == self.cursor:
            return
        old = self.cursor
        self.cursor = index
        self.refresh_line(old)
        self.refresh_line(index)
        self._scroll_cursor_into_view()
        self.post_message(self.CursorChanged(self, self.current))

    def move_to_name(self, name: str) -> bool:
        for i, e in enumerate(self.rows):
            if e.name == name:
                self.move_to(i)
                return True
        return False

    def next_sample(self, step: int) -> bool:
        """Move to the next (+1) or previous (-1) sample file; False when there is none."""
        visible = self.rows
        i = self.cursor + step
        while 0 <= i < len(visible):
            e = visible[i]
            if e.kind == "file" and is_sample_name(e.name):
                self.move_to(i)
                return True
            i += step
        return False

    def on_key(self, event: events.Key) -> None:
        # Bindings run only after a key has bubbled up, so keys typed in one burst with "/"
        # would all reach this list before the focus moves to the filter box. Open the box
        # here, at once, and hand on printable keys that still arrive, so "/12" filters "12".
        if event.key == "slash" and self.has_focus:
            event.stop()
            event.prevent_default()
            if isinstance(self.screen, Filters):
                self.screen.action_filter()
            return
        focused = self.screen.focused
        if focused is not None and focused is not self and event.is_printable:
            event.stop()
            event.prevent_default()
            focused.post_message(events.Key(event.key, event.character))

    # ----- actions

    def action_cursor_down(self) -> None:
        self.move_to(self.cursor + 1)

    def action_cursor_up(self) -> None:
        self.move_to(self.cursor - 1)

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(len(self.rows) - 1)

    def action_page_down(self) -> None:
        self.move_to(self.cursor + max(1, self.size.height - 1))

    def action_page_up(self) -> None:
        self.move_to(self.cursor - max(1, self.size.height - 1))

    def action_open(self) -> None:
        if self.current is not None:
            self.post_message(self.Opened(self, self.current))

    def action_parent(self) -> None:
        self.post_message(self.ParentRequested())

    # ----- rendering

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        visible = self.rows
        if index >= len(visible):
            if not visible and self.message is not None:
                text, component = self.message
                lines = textwrap.wrap(text, max(8, width - 2)) or [""]
                if index < len(lines):
                    style = base + self._style(component)
                    return Strip([Segment(" " + lines[index], style)]).adjust_cell_length(width, base)
            return Strip.blank(width, base)
        return self.render_entry(visible[index], width, base, selected=index == self.cursor)

    def render_entry(self, entry: Entry, width: int, base: Style, *, selected: bool) -> Strip:
        """One row: [marker][name][size]. The marker column: bookmark, then scan mark."""
        if selected:
            base = base + self._style("browser--cursor")
        marker = (self.marker(entry) if self.marker else None) or ""
        scan = self.scan_marks.get(entry.name) if self.scan_marks else None
        if scan is None:
            segments = [Segment(marker[:MARKER_WIDTH].ljust(MARKER_WIDTH), base + self._style("browser--marker"))]
        else:
            segments = [Segment(marker[:1].ljust(1), base + self._style("browser--marker")),
                        Segment(SCAN_GLYPH[scan], base + self._style(f"browser--scan-{scan}"))]
        kind_style = {
            "dir": "browser--dir",
            "link": "browser--link",
            "other": "browser--link",
        }.get(entry.kind) or ("browser--sample" if is_sample_name(entry.name) else "browser--file")
        name_style = base + self._style(kind_style)
        name = printable(entry.name) + ("/" if entry.kind == "dir" else "")
        if entry.kind == "link":
            size_text = "dead"
        elif entry.kind == "other":
            size_text = "other"
        else:
            size_text = human_size(entry.size)
        room = max(1, width - MARKER_WIDTH - SIZE_WIDTH - 1)
        if len(name) > room:
            name = name[: room - 1] + "…"
        segments.extend(self._name_segments(name, name_style))
        pad = room - len(name)
        segments.append(Segment(" " * (pad + 1), base))
        segments.append(Segment(size_text.rjust(SIZE_WIDTH)[:SIZE_WIDTH], base + self._style("browser--size")))
        return Strip(segments).adjust_cell_length(width, base)

    def _name_segments(self, name: str, style: Style) -> list[Segment]:
        if not self.filter:
            return [Segment(name, style)]
        at = name.casefold().find(self.filter.casefold())
        if at < 0:
            return [Segment(name, style)]
        end = at + len(self.filter)
        match_style = style + self._style("browser--match")
        return [Segment(name[:at], style), Segment(name[at:end], match_style), Segment(name[end:], style)]

    # ----- helpers

    def _matches(self, entry: Entry) -> bool:
        return self.filter.casefold() in entry.name.casefold()

    def _find(self, name: str) -> Entry | None:
        for kind in ("file", "dir"):  # the key needs the kind; files are the usual target
            probe = Entry(name, kind)
            i = bisect_left(self.keys, sort_key(probe))
            if i < len(self.entries) and self.entries[i].name == name:
                return self.entries[i]
        return None

    def _place_cursor(self, entry: Entry) -> None:
        rows = self.rows
        key = sort_key(entry)
        if rows is self.entries:
            i = bisect_left(self.keys, key)
        else:
            i = bisect_left(rows, key, key=sort_key)
        if i < len(rows) and rows[i].name == entry.name:
            self.cursor = i
        else:
            self.cursor = max(0, min(i, len(rows) - 1))
        self._scroll_cursor_into_view()

    def _update_size(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows))

    def on_resize(self) -> None:
        self._update_size()
        self._scroll_cursor_into_view()

    def _scroll_cursor_into_view(self) -> None:
        height = self.scrollable_content_region.height or self.size.height
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif height and self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)
