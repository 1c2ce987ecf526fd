"""The dataset view's table of files: a Line API view, so 100,000 records cost only the rows
on screen. It draws a DatasetRows (ui/dataset/model.py) and posts what the user asks for; the
screen owns the rows, the scan and what enter, b and t do."""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import BindingType
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from eagle3_tui.names import printable
from eagle3_tui.ui import keys
from eagle3_tui.ui.dataset.bins import SlotBins
from eagle3_tui.ui.dataset.model import Column, DatasetRows, Record
from eagle3_tui.ui.shared.format import human_size
from eagle3_tui.ui.shared.row_cursor import RowCursor, keep_row_in_view
from eagle3_tui.ui.shared.styled_view import StyledScrollView

STATUS_GLYPH = {"ok": "✓", "warning": "!", "error": "✗", None: "·"}
PATH_MIN = 14


class DatasetTable(RowCursor, StyledScrollView, can_focus=True):
    COMPONENT_CLASSES = {
        "table--head", "table--sorted", "table--cursor", "table--ok", "table--warning",
        "table--error", "table--dim", "table--outlier", "table--message",
    }

    BINDINGS: ClassVar[list[BindingType]] = [*keys.DATASET_TABLE]

    class Chosen(Message):
        """enter / b / t on a file: `what` is "open", "bookmark" or "pin"."""

        def __init__(self, what: str, record: Record) -> None:
            super().__init__()
            self.what = what
            self.record = record

    class SortChanged(Message):
        pass

    def __init__(self, rows: DatasetRows, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows = rows
        self.cursor = 0
        self._moved = False
        self._on: int | None = None  # the record the cursor is on, kept through re-sorts
        self.message = "scanning…"
        self.bins: dict[str, SlotBins] = {}
        self._last_shown: tuple = ()
        #: rows drawn since mounted (tests and the benchmark read it: only visible rows are drawn)
        self.lines_rendered = 0

    # ----- state

    @property
    def current(self) -> Record | None:
        view = self.rows.view
        return self.rows.records[view[self.cursor]] if 0 <= self.cursor < len(view) else None

    def rows_changed(self, *, only_if_shown: bool = False) -> None:
        """The rows' view changed (records arrived, a sort, a filter): keep the cursor's record.
        only_if_shown: the records themselves are unchanged (more arrived), so the rows are
        redrawn only if the ones on screen moved; records landing below them (the usual case
        while a scan streams in, in path order) cost a scrollbar, not a table, ten times a second."""
        view = self.rows.view
        if self._moved and self._on is not None:
            try:
                self.cursor = view.index(self._on)
            except ValueError:
                self.cursor = max(0, min(self.cursor, len(view) - 1))
        else:
            self.cursor = max(0, min(self.cursor, len(view) - 1))
        self._on = view[self.cursor] if view else None
        self._set_virtual_size(Size(self._width(), len(view) + 1))
        self._scroll_cursor_into_view()
        shown = self._shown()
        if not only_if_shown or shown != self._last_shown:
            self.refresh()
        self._last_shown = shown

    def _shown(self) -> tuple:
        """What the visible rows draw from: the records there, the cursor, the columns (as of
        the last rows_changed(); anything else that changes them refreshes on its own)."""
        top = self.scroll_offset.y
        return (self.rows.view[top:top + self.size.height], self.cursor, self.rows.columns, self.rows.sort_col,
                self.rows.descending)

    def _set_virtual_size(self, size: Size) -> None:
        """Records streaming in lengthen the table ten times a second. Setting virtual_size
        lays out the whole screen (~7 ms, most of a key's budget while records stream in);
        when a vertical scrollbar is shown before and after and the width stays, only the
        scrollbar's length changes, so only it is told."""
        old = self.virtual_size
        if size == old:
            return
        if (size.width == old.width and self.show_vertical_scrollbar and not self.show_horizontal_scrollbar
                and min(size.height, old.height) > self.size.height + 1):
            self.set_reactive(DatasetTable.virtual_size, size)
            bar = self.vertical_scrollbar
            bar.window_virtual_size = size.height
            bar.refresh()
        else:
            self.virtual_size = size

    def move_to(self, index: int) -> None:
        view = self.rows.view
        if not view:
            return
        index = max(0, min(index, len(view) - 1))
        self._moved = True
        old, self.cursor = self.cursor, index
        self._on = view[index]
        self.refresh_line(old + 1)  # virtual lines: the header is line 0
        self.refresh_line(index + 1)
        self._scroll_cursor_into_view()

    def on_resize(self) -> None:
        # the findings above grow when they arrive: the cursor's row must stay on screen
        self._set_virtual_size(Size(self._width(), len(self.rows.view) + 1))
        self.call_after_refresh(self._scroll_cursor_into_view)

    def _scroll_cursor_into_view(self) -> None:
        keep_row_in_view(self, self.cursor)

    # ----- actions (j/k, page, g/G: RowCursor)

    @property
    def item_count(self) -> int:
        return len(self.rows.view)

    def action_sort_next(self) -> None:
        self.rows.cycle_sort()
        self.rows_changed()
        self.post_message(self.SortChanged())

    def action_sort_flip(self) -> None:
        self.rows.flip()
        self.rows_changed()
        self.post_message(self.SortChanged())

    def action_choose(self, what: str) -> None:
        if self.current is not None:
            self.post_message(self.Chosen(what, self.current))

    # ----- rendering

    def _width(self) -> int:
        return self.scrollable_content_region.width or self.size.width

    def column_widths(self, width: int) -> list[tuple[Column, int]]:
        """The columns that fit in `width` and their widths; the file path takes what is left."""
        cols = list(self.rows.columns)
        def need(cs): return sum(c.width + 1 for c in cs if c.name != "path") + PATH_MIN
        while need(cols) > width and any(c.drop for c in cols):
            worst = max(c.drop for c in cols)
            cols = [c for c in cols if c.drop != worst]
        path_w = max(PATH_MIN, width - sum(c.width + 1 for c in cols if c.name != "path") - 1)
        return [(c, path_w if c.name == "path" else c.width) for c in cols]

    def render_line(self, y: int) -> Strip:
        width = self._width()
        base = self.rich_style
        if y == 0:
            return self._header(width, base)
        index = self.scroll_offset.y + y - 1
        view = self.rows.view
        if index >= len(view):
            if not view and y == 1 and self.message:
                return Strip([Segment(" " + self.message, base + self._style("table--message"))]).adjust_cell_length(width, base)
            return Strip.blank(width, base)
        self.lines_rendered += 1
        return self._row(self.rows.records[view[index]], width, base, index == self.cursor)

    def _header(self, width: int, base: Style) -> Strip:
        head = base + self._style("table--head")
        segs = []
        for col, w in self.column_widths(width):
            title = col.title
            style = head
            if col.name == self.rows.sort_col:
                title = title + ("▼" if self.rows.descending else "▲")
                style = head + self._style("table--sorted")
            text = title[:w].ljust(w) if not col.numeric or col.name == "status" else title[:w].rjust(w)
            segs.append(Segment(text, style))
            segs.append(Segment(" ", head))
        return Strip(segs).adjust_cell_length(width, head)

    def _row(self, r: Record, width: int, base: Style, selected: bool) -> Strip:
        if selected:
            base = base + self._style("table--cursor")
        segs: list[Segment] = []
        error = r.get("error")
        for col, w in self.column_widths(width):
            style = base
            name = col.name
            if name == "status":
                status = r.get("status")
                text = STATUS_GLYPH[status]
                style = base + self._style(f"table--{status}" if status else "table--dim")
            elif name == "path":
                text = printable(r.path)
                text = text if len(text) <= w else "…" + text[-(w - 1):]
                text = text.ljust(w)
            elif error is not None:
                if name == "index":
                    text = _cell(r.get("index"), w)
                elif name == "size":
                    text = human_size(r.get("size")).rjust(w)
                else:
                    continue  # the error text fills the rest of the row, after the columns
            else:
                value = col.value(r)
                if name == "size":
                    text = human_size(value).rjust(w)
                elif name == "dtype":
                    text = str(value or "")[:w].ljust(w)
                elif name == "top1":  # the drafter's step-1 top-1 (the acceptance step's files)
                    text = ("-" if value is None else f"{100 * value:.1f}%").rjust(w)
                elif name == "nonfinite":
                    text = _cell(value, w)
                    if value:
                        style = base + self._style("table--error")
                else:
                    text = _cell(value, w)
                    b = self.bins.get(name)
                    if b is not None and value is not None and not (b.cut_lo <= value <= b.cut_hi):
                        style = base + self._style("table--outlier")
            segs.append(Segment(text[:w].ljust(w) if len(text) < w else text[:w], style))
            segs.append(Segment(" ", base))
        if error is not None:
            kind = "table--dim" if r.get("not_sample") else "table--error"
            segs.append(Segment(printable(str(error), message=True), base + self._style(kind)))
        return Strip(segs).adjust_cell_length(width, base)


def _cell(value, width: int) -> str:
    if value is None:
        return "-".rjust(width)
    if isinstance(value, float):
        text = f"{value:.{max(1, width - 3)}g}" if abs(value) < 1e5 else f"{value:.2e}"
        if len(text) > width:
            text = f"{value:.3g}"
        return text.rjust(width)
    return f"{value}".rjust(width)
