"""The cursor keys of the app's Line-API tables (a fixed header row, then one row per item):
j/k, page up/down, g/G, and keeping the cursor's row on screen."""

from __future__ import annotations

from typing import Protocol

from textual.geometry import Size


class CursorTable(Protocol):
    """What a table gives its RowCursor keys."""

    header_rows: int
    cursor: int

    @property
    def size(self) -> Size: ...

    @property
    def item_count(self) -> int: ...

    def move_to(self, index: int) -> None: ...


def keep_row_in_view(widget, row: int, header_rows: int = 1) -> None:
    """Scroll `widget` (a ScrollView whose first `header_rows` lines are its header) so that item
    `row` is on screen."""
    height = max(1, (widget.scrollable_content_region.height or widget.size.height) - header_rows)
    top = widget.scroll_offset.y
    if row < top:
        widget.scroll_to(y=row, animate=False, immediate=True)
    elif row >= top + height:
        widget.scroll_to(y=row - height + 1, animate=False, immediate=True)


class RowCursor:
    """The actions keys.py binds for a table: the widget gives `cursor`, `item_count` and
    `move_to(index)` (which clamps and redraws)."""

    header_rows = 1

    def action_move(self: CursorTable, delta: int) -> None:
        self.move_to(self.cursor + delta)

    def action_page(self: CursorTable, direction: int) -> None:
        self.move_to(self.cursor + direction * max(1, self.size.height - self.header_rows - 1))

    def action_first(self: CursorTable) -> None:
        self.move_to(0)

    def action_last(self: CursorTable) -> None:
        self.move_to(self.item_count - 1)
