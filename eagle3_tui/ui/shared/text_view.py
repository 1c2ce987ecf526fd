"""A read-only viewer for text files in the data folder (README.txt, config.json, notes).

The main screen opens it when `enter` or `l` meets a file whose first bytes are text
(sources/text_head.py); the bytes come through the Source, so a file on the SSH box is read
the same way as a local one, at most TEXT_LIMIT of it (the title says when that cut it).
Control characters are shown as '�', never sent to the terminal.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from eagle3_tui.names import printable
from eagle3_tui.ui import keys
from eagle3_tui.ui.shared.format import fit_line, human_size
from eagle3_tui.ui.shared.status import KeysFooter, Line, StatusLine

#: C0 controls but tab and newline, DEL and the C1 controls: shown, never sent to the terminal
_CONTROLS = {c: "\ufffd" for c in (*range(9), *range(11, 32), *range(127, 160))}


def shown_text(text: str) -> str:
    return text.replace("\r\n", "\n").expandtabs(4).translate(_CONTROLS)


class TextViewScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [*keys.TEXT_VIEW]

    DEFAULT_CSS = """
    TextViewScreen #text-title { height: 1; background: $panel; }
    TextViewScreen #text-body { height: 1fr; }
    TextViewScreen #text-content { padding: 0 1; }
    """

    AUTO_FOCUS = "#text-body"

    def __init__(self, path: str, where: str, text: str, size: int, truncated: bool) -> None:
        super().__init__()
        self.path, self.where = path, where
        self.text, self.file_size, self.truncated = text, size, truncated

    def compose(self) -> ComposeResult:
        yield Line(id="text-title")
        with VerticalScroll(id="text-body"):
            yield Static(Text(shown_text(self.text)), id="text-content")
        yield StatusLine(id="text-status")
        yield KeysFooter(compact=True)

    def on_mount(self) -> None:
        lines = self.text.count("\n") + (0 if self.text.endswith("\n") else 1)
        cut = f" · first {human_size(len(self.text.encode('utf-8', 'surrogatepass')))} of {human_size(self.file_size)} shown" \
            if self.truncated else ""
        self.title_text = f" text (read-only)  {printable(self.path)}  on {self.where} · {lines:,} lines{cut}"
        self.on_resize()
        self.query_one("#text-status", StatusLine).say(
            ("truncated: the file is longer than the viewer reads · " if self.truncated else "")
            + "j/k scroll · g/G top/bottom · esc back")

    def on_resize(self) -> None:
        """The title on one line: a long path loses its middle, never the file name or "on box"."""
        width = self.size.width or self.app.size.width
        self.query_one("#text-title", Line).update(fit_line(self.title_text, width))

    @property
    def body(self) -> VerticalScroll:
        return self.query_one("#text-body", VerticalScroll)

    def action_scroll(self, lines: int) -> None:
        self.body.scroll_relative(y=lines, animate=False)

    def action_page(self, pages: int) -> None:
        self.body.scroll_relative(y=pages * max(1, self.body.size.height - 1), animate=False)

    def action_top(self) -> None:
        self.body.scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.body.scroll_end(animate=False)

    def action_back(self) -> None:
        self.dismiss(None)
