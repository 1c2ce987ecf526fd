"""One-line text widgets that repaint without a layout pass.

Static.update() asks for a new layout of the whole screen; the status and location lines
change on every cursor move and every listing page, so they only repaint themselves.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from eagle3_tui.names import printable
from eagle3_tui.ui.format import fit_line


class Line(Widget):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._text = Text()

    def update(self, text: str | Text) -> None:
        text = Text(text) if isinstance(text, str) else text
        if text != self._text:
            # an auto-width line needs a layout pass only when its length changes
            width = self.styles.width
            layout = width is not None and width.is_auto and text.cell_len != self._text.cell_len
            self._text = text
            self.refresh(layout=layout)

    @property
    def text(self) -> str:
        return self._text.plain

    def render(self) -> Text:
        return self._text


class StatusLine(Line):
    """A screen's status line: one line of escaped text, styled `-error` when it reports one.

    Every screen says things through `say`, so a name with control characters can never reach
    the terminal from a status line.
    """

    def say(self, text: str, *, error: bool = False) -> None:
        self.update(Text(printable(text, message=True)))
        self.set_class(error, "-error")

    def render(self) -> Text:
        """The line fitted to the width it has now: a long path loses its middle, never the end
        of the sentence nor the file name (a 244-character export path showed as "exported")."""
        width = self.size.width
        if width and self._text.cell_len > width:
            return Text(fit_line(self._text.plain, width))
        return self._text
