"""The base of the app's Line-API views (the browser list, the dataset table, the compare view's
aligned tokens): render_line asks for a component class's style on every line of every frame, so
the styles are looked up once and again only when the styles change."""

from __future__ import annotations

from rich.style import Style
from textual.scroll_view import ScrollView


class StyledScrollView(ScrollView):
    _styles: dict[str, Style] | None = None

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None

    def _style(self, name: str) -> Style:
        if self._styles is None:
            self._styles = {c: self.get_component_rich_style(c, partial=True) for c in self.COMPONENT_CLASSES}
        return self._styles[name]
