"""Bookmark screens: the list (filter, edit note and tags, delete, jump) and small dialogs.

The screens only render and dispatch; the BookmarkStore (eagle3_tui.bookmarks) owns the data.
A store error (say, the file went bad while the app runs) is shown, never raised.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Input, Label, Static

from eagle3_tui.bookmarks import Bookmark, BookmarkError, BookmarkStore
from eagle3_tui.names import printable
from eagle3_tui.ui import keys
from eagle3_tui.ui.shared.format import elide
from eagle3_tui.ui.shared.status import KeysFooter, StatusLine

TARGET_WIDTH = 44



class TextPrompt(ModalScreen[str | None]):
    """One line of text: enter returns it, esc returns None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]

    def __init__(self, title: str, value: str = "", *, placeholder: str = "", help: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.placeholder = placeholder
        self.help_text = help or "enter saves · esc cancels"

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-dialog"):
            yield Label(Text(self.title_text), id="prompt-title")
            yield Input(self.value, placeholder=self.placeholder, id="prompt-input")
            yield Label(self.help_text, id="prompt-help")

    @on(Input.Submitted, "#prompt-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question; only y answers yes."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, help: str = "y: yes · n or esc: no") -> None:
        super().__init__()
        self.question = question
        self.help_text = help

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Label(Text(self.question), id="confirm-question")
            yield Label(self.help_text, id="confirm-help")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class BookmarkTable(DataTable):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_top", "First", show=False),
        Binding("G", "scroll_bottom", "Last", show=False),
    ]


class BookmarksScreen(Screen[str | None]):
    """Every bookmark, newest last. Dismisses with the target to jump to, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [*keys.BOOKMARK_LIST]

    AUTO_FOCUS = "#bm-table"

    def __init__(self, store: BookmarkStore, select: str | None = None) -> None:
        super().__init__()
        self.store = store
        self.filter_text = ""
        self.rows: list[Bookmark] = []
        self._select = select

    def compose(self) -> ComposeResult:
        yield Label(id="bm-title")
        yield Input(placeholder="filter: words in target, note, #tag or headline…", id="bm-filter")
        table = BookmarkTable(id="bm-table", cursor_type="row", zebra_stripes=True)
        table.add_columns("target", "tags", "note", "sample")
        yield table
        yield Static(id="bm-detail")
        yield StatusLine(id="bm-status")
        yield KeysFooter(compact=True)

    @property
    def table(self) -> BookmarkTable:
        return self.query_one(BookmarkTable)

    @property
    def current(self) -> Bookmark | None:
        row = self.table.cursor_row
        return self.rows[row] if 0 <= row < len(self.rows) else None

    def on_mount(self) -> None:
        self.reload(select=self._select)

    def reload(self, select: str | None = None) -> None:
        """Read the store again, keeping the cursor on `select` (default: the current row)."""
        if select is None and self.current is not None:
            select = self.current.target
        try:
            self.rows = self.store.list(self.filter_text or None)
        except BookmarkError as err:
            self.rows = []
            self.set_status(str(err), error=True)
        table = self.table
        table.clear()
        for b in self.rows:
            table.add_row(
                Text(elide(printable(b.target), TARGET_WIDTH)),
                Text(printable(" ".join("#" + t for t in b.tags), message=True)),
                Text(elide(printable(" ".join(b.note.split()), message=True), 40)),
                Text(elide(printable(b.headline_text, message=True), 48)),
                key=b.target,
            )
        index = next((i for i, b in enumerate(self.rows) if b.target == select), 0)
        if self.rows:
            table.move_cursor(row=index, animate=False)
        self._update_title()
        self._show_detail()

    def _update_title(self) -> None:
        total = f"{len(self.rows)} bookmark{'s' if len(self.rows) != 1 else ''}"
        if self.filter_text:
            total += f" matching {self.filter_text!r}"
        self.query_one("#bm-title", Label).update(
            Text(printable(f" Bookmarks: {total}  ({self.store.path})", message=True)))

    def _show_detail(self) -> None:
        b = self.current
        detail = self.query_one("#bm-detail", Static)
        if b is None:
            detail.update(Text("No bookmarks here. In the browser, b bookmarks the sample under the "
                               "cursor.", style="italic") if not self.filter_text else
                          Text("Nothing matches the filter.", style="italic"))  # fmt: skip
            return
        lines = Text(printable(b.target), style="bold")
        if b.tags:
            lines.append("\n" + printable(" ".join("#" + t for t in b.tags), message=True))
        if b.headline_text:
            lines.append("\n" + printable(b.headline_text, message=True))
        if b.note:
            lines.append("\n" + printable(b.note, message=True))
        detail.update(lines)

    def set_status(self, text: str, *, error: bool = False) -> None:
        self.query_one(StatusLine).say(text, error=error)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        b = self.current
        if b is not None:
            self.dismiss(b.target)

    # ----- filter

    def action_filter(self) -> None:
        box = self.query_one("#bm-filter", Input)
        box.add_class("-shown")
        box.focus()

    @on(Input.Changed, "#bm-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip()
        self.reload()

    @on(Input.Submitted, "#bm-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            event.input.remove_class("-shown")
        self.table.focus()

    def action_close(self) -> None:
        box = self.query_one("#bm-filter", Input)
        if box.has_focus or self.filter_text:
            box.value = ""
            box.remove_class("-shown")
            self.table.focus()
            return
        self.dismiss(None)

    # ----- edits

    def action_edit_note(self) -> None:
        b = self.current
        if b is None:
            return

        def save(note: str | None) -> None:
            if note is not None:
                self._write(lambda: self.store.set_note(b.target, note), f"note saved for {b.target}")

        self.app.push_screen(TextPrompt(f"Note for {b.target}", b.note, placeholder="why is it suspect?"), save)

    def action_edit_tags(self) -> None:
        b = self.current
        if b is None:
            return

        def save(text: str | None) -> None:
            if text is not None:
                tags = [t.lstrip("#") for t in text.replace(",", " ").split()]
                self._write(lambda: self.store.set_tags(b.target, tags), f"tags saved for {b.target}")

        self.app.push_screen(
            TextPrompt(f"Tags for {b.target}", " ".join(b.tags), placeholder="words separated by spaces",
                       help="enter saves · esc cancels · one word per tag"),
            save,
        )  # fmt: skip

    def action_delete(self) -> None:
        b = self.current
        if b is None:
            return
        index = self.table.cursor_row
        others = [r for r in self.rows if r.target != b.target]
        neighbour = others[min(index, len(others) - 1)].target if others else None

        def answer(yes: bool | None) -> None:
            if yes:
                self._write(lambda: self.store.remove(b.target), f"deleted {b.target}", select=neighbour)
            else:
                self.set_status("kept")

        self.app.push_screen(ConfirmScreen(f"Delete the bookmark of {b.target}?"), answer)

    def _write(self, change, done: str, select: str | None = None) -> None:
        try:
            change()
        except BookmarkError as err:
            self.set_status(str(err), error=True)
            return
        self.set_status(done)
        self.reload(select=select)
