"""One-line text widgets that repaint without a layout pass.

Static.update() asks for a new layout of the whole screen; the status and location lines
change on every cursor move and every listing page, so they only repaint themselves.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget


class Line(Widget):
    DEFAULT_CSS = "Line { height: 1; width: 1fr; }"

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
