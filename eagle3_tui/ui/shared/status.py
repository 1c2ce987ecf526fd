"""The one-line widgets of every screen: text lines that repaint without a layout pass, and
the footer.

Static.update() asks for a new layout of the whole screen; the status and location lines
change on every cursor move and every listing page, so they only repaint themselves.

Textual's Footer rebuilds all its key widgets whenever the screen's bindings may have changed
(a focus change, a screen mounted): at start-up three times before the first frame, each time
11 FooterKey widgets styled one by one (~30 ms of the first frame's CPU with the profiler on).
The keys are the same each time; KeysFooter keeps its widgets when the keys are the same.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Footer

from eagle3_tui.names import printable
from eagle3_tui.ui.shared.format import fit_line


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

class KeysFooter(Footer):
    # Docked right, the compact palette key stops one column short of the footer's end, and a key
    # scrolled under it shows there (a stray `H` of "? Help" at 80 columns): one more column of
    # padding, drawn one column to the right, covers it; every other column stays as it was
    DEFAULT_CSS = """
    KeysFooter.-compact FooterKey.-command-palette {
        padding-right: 1;
        offset-x: 1;
    }
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple | None = None  # what the last compose drew

    def _keys(self) -> tuple:
        """Everything compose() reads: the shown bindings, enabled or not, and the palette key."""
        if not self._bindings_ready:
            return ()
        app = self.app
        active = self.screen.active_bindings
        shown = tuple(
            (b.key, app.get_key_display(b), b.description, b.action, b.tooltip, enabled, tooltip, b.group)
            for (_, b, enabled, tooltip) in active.values()
            if b.show or b.key == app.COMMAND_PALETTE_BINDING
        )
        return (shown, self.compact, self.show_command_palette, self.combine_groups)

    def compose(self):
        self._shown = self._keys()
        yield from super().compose()

    async def recompose(self) -> None:
        if self.is_attached and self._shown is not None and self._keys() == self._shown:
            return  # the same keys as on screen
        await super().recompose()
