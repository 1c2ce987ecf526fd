"""Pure helpers that turn numbers, sizes and paths into short strings, and norms into binned strips.

The one home of each number kind the UI shows (num: any value; fixed: ratios and errors;
human_size: bytes; cosines are ui/compare/format.cos_text). No Textual here, so the rules for what a user sees can be tested directly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len

if TYPE_CHECKING:
    from rich.style import Style
    from rich.text import Text

#: Names of files the browser treats as samples (n/p jump between these; the sample panel
#: follows the cursor onto them). The schema itself is always detected from the keys.
SAMPLE_SUFFIXES = (".pt", ".pth", ".ckpt", ".ckpt.gz", ".pt.gz", ".safetensors", ".bin")

SPARK = "▁▂▃▄▅▆▇█"
OUTLIER_FACTOR = 4.0


def is_sample_name(name: str) -> bool:
    return name.lower().endswith(SAMPLE_SUFFIXES)


def human_size(size: int | None) -> str:
    if size is None:
        return ""
    value = float(size)
    for unit in ("B", "K", "M", "G", "T"):
        if value < 1024 or unit == "T":
            if unit == "B":
                return f"{int(value)}B"
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
        value /= 1024
    return f"{size}B"  # pragma: no cover - loop always returns


def num(value: float | None, width: int = 7) -> str:
    """A number in at most `width` characters; None (a non-finite value) reads 'nan/inf'."""
    if value is None:
        return "—"
    if value == 0:
        return "0"
    for digits in (4, 3, 2, 1):
        text = f"{value:.{digits}g}"
        if len(text) <= width and not ("e+" in text and abs(value) < 1e12):
            return text
    # a massive activation (25,139) reads "25.1k", not "3e+04"
    for scale, unit in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        for digits in (1, 0):
            text = f"{value / scale:.{digits}f}{unit}"
            if 1 <= abs(value) / scale < 1000 and len(text) <= width:
                return text
    for digits in (3, 2, 1, 0):
        text = f"{value:.{digits}e}"
        if len(text) <= width:
            return text
    return f"{value:.0e}"


def fixed(value: float | None, digits: int) -> str:
    """A ratio or relative error with `digits` decimals; scientific when that would hide it."""
    if value is None:
        return "—"
    if value != 0 and (abs(value) >= 1e4 or abs(value) < 10 ** -digits):
        return f"{value:.1e}"
    return f"{value:.{digits}f}"


def left_trim(text: str, width: int) -> str:
    """The end of a long path (the file name is what tells two apart): "…/rows_0-2000/data_1.pt"."""
    if width <= 1:
        return text[:max(0, width)]
    return text if len(text) <= width else "…" + text[-(width - 1):]


def elide(text: str, width: int) -> str:
    """Both ends of a long target: the host and the file name are what tell them apart."""
    if len(text) <= width:
        return text
    head = width // 3
    return text[:head] + "…" + text[len(text) - (width - head - 1) :]


def fit_line(text: str, width: int) -> str:
    """`text` on `width` cells: when too long, the middle of its longest path goes (its start and
    its file name's end stay) so the sentence around it is whole; a line with no path long
    enough to give the room is cut at the end with "…"."""
    over = cell_len(text) - width
    if over <= 0 or width <= 0:
        return text
    words = text.split(" ")
    paths = [i for i, w in enumerate(words) if "/" in w]
    if paths:
        i = max(paths, key=lambda j: len(words[j]))
        path = words[i]
        keep = len(path) - over - 1
        while keep >= 4:
            words[i] = elide(path, keep)
            fitted = " ".join(words)
            if cell_len(fitted) <= width:
                return fitted
            keep -= 1
    out = text
    while out and cell_len(out) > width - 1:
        out = out[:-1]
    return out + "…"


def bin_values(values: Sequence[float | None], width: int) -> list[tuple[int, int]]:
    """Split T tokens into at most `width` contiguous bins: (start, end) token ranges.

    When T fits, each token gets its own column; otherwise bins are as even as possible.
    """
    total = len(values)
    if total == 0 or width <= 0:
        return []
    bins = min(total, width)
    return [(i * total // bins, (i + 1) * total // bins) for i in range(bins)]


def bin_max(values: Sequence[float | None], ranges: list[tuple[int, int]]) -> list[float | None]:
    """The largest finite value of each bin (None when a bin holds only non-finite values).

    The maximum keeps a single outlier token visible however many tokens share its column.
    """
    out: list[float | None] = []
    for start, end in ranges:
        best: float | None = None
        for v in values[start:end]:
            if v is not None and not math.isnan(v) and (best is None or v > best):
                best = v
        out.append(best)
    return out


def spark_levels(values: Sequence[float | None], low: float | None, high: float | None) -> str:
    """One block character per value, scaled between low and high; '×' for non-finite."""
    if low is None or high is None:
        return "".join("×" if v is None else SPARK[0] for v in values)
    span = high - low
    chars = []
    for v in values:
        if v is None:
            chars.append("×")
        elif span <= 0:
            chars.append(SPARK[3])
        else:
            level = int((v - low) / span * (len(SPARK) - 1) + 0.5)
            chars.append(SPARK[max(0, min(len(SPARK) - 1, level))])
    return "".join(chars)


def bin_kind(
    ranges: list[tuple[int, int]], valid_tokens: int, mask: Sequence[int] | None
) -> list[str]:
    """What each bin holds: 'pad' (only trailing padding), 'masked' (loss mask all 0), 'train'."""
    kinds = []
    for start, end in ranges:
        if start >= valid_tokens:
            kinds.append("pad")
        elif mask is not None and not any(mask[start:min(end, valid_tokens)]):
            kinds.append("masked")
        else:
            kinds.append("train")
    return kinds


def bin_of(token: int, ranges: list[tuple[int, int]]) -> int:
    for i, (start, end) in enumerate(ranges):
        if start <= token < end:
            return i
    return len(ranges) - 1


def spark_scale(values: Sequence[float | None]) -> tuple[float | None, float | None]:
    """(low, high) for drawing binned norms.

    A few huge rows (attention sinks, the first token) would flatten everything else to the
    bottom level, so when the maximum is more than 4x the median the top is the largest
    value under that; the columns above it are drawn full height and marked by the caller.
    """
    finite = sorted(v for v in values if v is not None and not math.isnan(v))
    if not finite:
        return None, None
    low, high = finite[0], finite[-1]
    median = finite[len(finite) // 2]
    if median > 0 and high > OUTLIER_FACTOR * median:
        high = max(v for v in finite if v <= OUTLIER_FACTOR * median)
    return low, high


def append_parts(out: Text, parts: Sequence[tuple[str, str | Style]], width: int, sep_style: str | Style = "",
                 sep: str = " · ") -> None:
    """Append (text, style) parts to the rich Text `out` as one line joined by `sep`, breaking
    before a part that would run past `width` (the next line indented by two): a line is read
    whole instead of ending in "…". A part longer than a line is broken after its commas (a
    drafter's shape: "SpecForge, 1 layer, 3 aux states, draft vocab 320"); what is still longer is
    cut at the width."""
    pieces: list[tuple[str, str | Style, str]] = []  # (text, style, joiner before it)
    for i, (text, style) in enumerate(parts):
        words = text.split(", ") if len(text) > width - 2 else [text]
        for j, word in enumerate(words):
            pieces.append((word + ("," if j < len(words) - 1 else ""), style, (sep if i else "") if j == 0 else " "))
    used = 0
    for i, (text, style, joiner) in enumerate(pieces):
        if i and used + len(joiner) + len(text) > width:
            out.append("\n  ")
            used, joiner = 2, ""
        if joiner:
            out.append(joiner, sep_style if joiner == sep else style)
        room = max(4, width - used - len(joiner))
        shown = text if len(text) <= room else text[: room - 1] + "…"
        out.append(shown, style)
        used += len(joiner) + len(shown)
    out.append("\n")
