"""The dataset view on a short screen (80x24): the file table keeps its rows, the panels above it
give. The screen carries the class `-short` below SHORT lines (app.tcss: the findings show their
first lines until tab reaches them, the norm strips go; ui/dataset/serving_table.py: the
serve-check shows its verdict and a few engines until tab reaches its rows)."""

from __future__ import annotations

from textual import events
from textual.dom import DOMNode

#: screens shorter than this are short (the panels above the file table give it their room)
SHORT = 34


def is_short(node: DOMNode) -> bool:
    return node.has_class("-short")


class ShortLayout(DOMNode):
    """Mixed into the dataset screen: `-short` follows the screen's height."""

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.height < SHORT, "-short")
