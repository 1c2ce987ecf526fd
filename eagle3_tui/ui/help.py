"""Every key of the app, read from the one key table (ui/keys.py) so the list cannot drift."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from eagle3_tui.ui.keys import HELP, key_text, sections

__all__ = ["HelpScreen", "key_text"]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close", id="help.close"), *HELP]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Static("Keys  (esc closes)", id="help-title")
            with VerticalScroll(id="help-body"):
                yield Static(self._table(), id="help-table")

    def action_scroll_by(self, lines: int) -> None:
        self.query_one("#help-body", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_page_by(self, pages: int) -> None:
        body = self.query_one("#help-body", VerticalScroll)
        body.scroll_relative(y=pages * max(1, body.size.height - 1), animate=False)

    def _table(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(justify="right", style="bold", no_wrap=True)
        table.add_column()
        for title, keys in sections():
            table.add_row(Text(title, style="underline"), "")
            for keys_text, what in keys:
                table.add_row(keys_text, what)
            table.add_row("", "")
        return table
