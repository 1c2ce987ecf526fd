"""Every key of the app, read from the one key table (ui/keys.py) so the list cannot drift."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from eagle3_tui.ui.keys import key_text, sections

__all__ = ["HelpScreen", "key_text"]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close", id="help.close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Static("Keys  (esc closes)", id="help-title")
            with VerticalScroll(id="help-body"):
                yield Static(self._table(), id="help-table")

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
