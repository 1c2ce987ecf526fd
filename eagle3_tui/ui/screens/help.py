"""Every key of the app, read from the bindings themselves so the list cannot drift."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEY_NAMES = {
    "down": "↓", "up": "↑", "left": "←", "right": "→", "enter": "enter", "escape": "esc",
    "left_square_bracket": "[", "right_square_bracket": "]", "left_curly_bracket": "{",
    "right_curly_bracket": "}", "plus": "+", "minus": "-", "equals_sign": "=", "slash": "/",
    "question_mark": "?", "pagedown": "pgdn", "pageup": "pgup", "backspace": "backspace",
}


def key_text(keys: str) -> str:
    names = []
    for key in keys.split(","):
        key = key.strip()
        mods, _, base = key.rpartition("+")
        shown = KEY_NAMES.get(base, base)
        names.append(f"{mods}+{shown}" if mods else shown)
    return " ".join(names)


def sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """(section title, [(keys, what they do)]) for every key the app answers."""
    from eagle3_tui.ui.app import Eagle3App
    from eagle3_tui.ui.screens.bookmarks import LIST_KEYS
    from eagle3_tui.ui.screens.main import FILTER_KEYS, MainScreen
    from eagle3_tui.ui.widgets.browser import BrowserList
    from eagle3_tui.ui.screens.compare import CompareScreen
    from eagle3_tui.ui.widgets.compare_tokens import TokenTable

    def rows(bindings: list[Binding]) -> list[tuple[str, str]]:
        return [(key_text(b.key), b.tooltip or b.description) for b in bindings if b.description]

    return [
        ("Anywhere", rows(Eagle3App.BINDINGS) + [("ctrl+p", "Command palette"), ("ctrl+q", "Quit")]),
        ("Folder browser", rows(BrowserList.BINDINGS)),
        ("Sample panel", rows(MainScreen.BINDINGS)),
        ("Compare view (c)", rows(CompareScreen.BINDINGS) + rows(TokenTable.BINDINGS)),
        ("While filtering", FILTER_KEYS),
        ("Bookmark list (B)", LIST_KEYS),
    ]


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
