"""One line per slot: how that slot's mean norm is spread across the files of the dataset.

The counts are binned by ui/dataset/bins.slot_bins (the strip only draws them); files whose
norm is far from the rest (outliers) are counted at the ends of the strip, in the error colour."""

from __future__ import annotations

from rich.segment import Segment
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from eagle3_tui.ui.dataset.bins import SlotBins

LEVELS = " ▁▂▃▄▅▆▇█"
LABEL_W = 8


def _num(v: float) -> str:
    return f"{v:.4g}"


class NormStrip(Widget):
    COMPONENT_CLASSES = {"strip--label", "strip--bar", "strip--outlier", "strip--dim"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.bins: list[SlotBins] = []

    def show(self, bins: list[SlotBins]) -> None:
        resize = len(bins) != len(self.bins)
        self.bins = bins
        self.set_class(not bins, "-empty")  # hidden (app.tcss), as on a short screen: a class, not display
        self.refresh(layout=resize)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.bins)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if y >= len(self.bins):
            return Strip.blank(width, base)
        b = self.bins[y]
        style = lambda name: base + self.get_component_rich_style(name, partial=True)  # noqa: E731
        tail = _tail(b)
        # one bar width for every line, so the strips line up
        room = max(8, width - LABEL_W - 4 - max(len(_tail(x)) for x in self.bins))
        out = b.low + b.high
        counts = _resample(b.counts, room)
        top = max(counts) or 1
        bar = "".join(LEVELS[0 if not c else max(1, round(c / top * (len(LEVELS) - 1)))] for c in counts)
        segs = [Segment(b.label[:LABEL_W - 1].ljust(LABEL_W), style("strip--label")),
                Segment("◀" if b.low else " ", style("strip--outlier")),
                Segment(bar, style("strip--bar")),
                Segment("▶" if b.high else " ", style("strip--outlier")),
                Segment(tail, style("strip--outlier") if out else style("strip--dim"))]
        return Strip(segs).adjust_cell_length(width, base)


def _tail(b: SlotBins) -> str:
    tail = f" {_num(b.lo)}…{_num(b.hi)}, median {_num(b.median)}"
    out = b.low + b.high
    return tail + (f", {out} outlier{'s' if out != 1 else ''}" if out else "")


def _resample(counts: list[int], width: int) -> list[int]:
    """Merge bins so they fit in `width` cells (never stretch them)."""
    n = len(counts)
    if n <= width:
        return counts
    return [sum(counts[i * n // width:(i + 1) * n // width]) for i in range(width)]
