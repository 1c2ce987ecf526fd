"""The aligned tokens of a comparison: one row per aligned token, a Line API view.

Only the rows on screen are drawn, so a 32k-token comparison costs what a 40-token one does.
Columns: a marker, the row (B row and A row when they differ), both sides' token ids and, when the
comparison was read with a tokenizer, both sides' token text (differing ids and texts stand out), then per
compared pair (slot 0..k-1, final) A's norm, B's norm and their cosine for that token. The row
and id columns stay put while the pair columns scroll sideways (left/right) on narrow screens.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import BindingType
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from eagle3_tui.engines.read.massive import massive_note, massive_rows, median_norm
from eagle3_tui.engines.results.compare import ComparisonResult, PairMetrics
from eagle3_tui.ui import keys
from eagle3_tui.ui.compare.format import (
    cos_kind,
    cos_text,
    pairs,
    row_count,
    worst_row,
)
from eagle3_tui.ui.shared.format import num
from eagle3_tui.ui.shared.norm_marks import MASSIVE_MARK
from eagle3_tui.ui.shared.row_cursor import RowCursor, keep_row_in_view
from eagle3_tui.ui.shared.styled_view import StyledScrollView

NUM_W = 6  # a norm or a cosine
GROUP_W = 1 + NUM_W + 1 + NUM_W + 1 + NUM_W  # "│‖A‖ ‖B‖ cos"
HEADER_ROWS = 1
TEXT_W = 12  # at most, per side: the text column is as wide as its longest token up to this
TEXT_MIN = 6  # at least, per side: the text gives way to the pair columns down to this


class AlignedTokenTable(RowCursor, StyledScrollView, can_focus=True):
    """Posts CursorMoved when the token under the cursor changes; does no I/O."""

    header_rows = HEADER_ROWS

    COMPONENT_CLASSES = {
        "tokens--head",
        "tokens--cursor",
        "tokens--dim",
        "tokens--match",
        "tokens--near",
        "tokens--far",
        "tokens--none",
        "tokens--pad",
        "tokens--worst",
        "tokens--iddiff",
        "tokens--sep",
        "tokens--massive",
    }

    BINDINGS: ClassVar[list[BindingType]] = [*keys.TOKENS]

    class CursorMoved(Message):
        def __init__(self, table: AlignedTokenTable, index: int) -> None:
            super().__init__()
            self.table = table
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.result: ComparisonResult | None = None
        self.cursor = 0
        self.count = 0
        self.message = "Comparing…"
        self._pairs: list[tuple[str, PairMetrics]] = []
        self._massive: dict[tuple[str, str], set[int]] = {}
        self._worst: int | None = None
        self._widths = (3, 3, 0, 0)  # B row, A row (0: same as B), A id, B id
        self._text_w = 0  # per side; 0: no token text
        self._text_want = 0  # per side, the longest token's text up to TEXT_W

    # ----- state

    def show(self, result: ComparisonResult) -> None:
        self.result = result
        self._pairs = pairs(result)
        self.count = row_count(result)
        self._massive = massive_cells(result)
        worst = worst_row(result)
        self._worst = worst[0] if worst else None
        rows = result.get("rows") or {}
        b0, a0 = rows.get("b_start", 0), rows.get("a_start", 0)
        last = max(0, self.count - 1)
        b_w = max(3, len(str(b0 + last)))  # "row" / "B#"
        a_w = 0 if a0 == b0 else max(2, len(str(a0 + last)))
        ids = [*(rows.get("a_ids") or []), *(rows.get("b_ids") or [])]
        id_w = max(4, *(len(str(v)) for v in ids)) if ids else 0  # "A id"
        self._widths = (b_w, a_w, id_w if rows.get("a_ids") is not None else 0,
                        id_w if rows.get("b_ids") is not None else 0)
        texts = [*(rows.get("a_text") or []), *(rows.get("b_text") or [])]
        self._text_want = min(TEXT_W, max(TEXT_MIN, *(len(t) for t in texts))) if texts else 0
        self._fit_text()
        self.cursor = max(0, min(self.cursor, last))
        self.message = "" if self.count else "No aligned tokens were compared."
        self._update_size()
        self._scroll_cursor_into_view()
        self.refresh()
        self.post_message(self.CursorMoved(self, self.cursor))

    def clear(self, message: str) -> None:
        self.result = None
        self._pairs = []
        self.count = 0
        self.message = message
        self._update_size()
        self.refresh()

    def move_to(self, index: int) -> None:
        if not self.count:
            return
        index = max(0, min(self.count - 1, index))
        if index != self.cursor:
            self.cursor = index
            self.refresh()
            self.post_message(self.CursorMoved(self, index))
        self._scroll_cursor_into_view()

    @property
    def worst(self) -> int | None:
        return self._worst

    # ----- actions (j/k, page, g/G: RowCursor)

    @property
    def item_count(self) -> int:
        return self.count

    # ----- layout

    @property
    def fixed_width(self) -> int:
        b_w, a_w, ida_w, idb_w = self._widths
        return 1 + b_w + sum(1 + w for w in (a_w, ida_w, idb_w) if w) + (2 * (1 + self._text_w) if self._text_w else 0)

    def _update_size(self) -> None:
        width = self.fixed_width + GROUP_W * len(self._pairs) + 1
        self.virtual_size = Size(width, self.count + HEADER_ROWS)

    def _fit_text(self) -> None:
        """The text columns give way (down to TEXT_MIN) so that every pair column fits when the
        screen has room for them at all (120 columns: the final's cosine); else ←/→ scroll."""
        self._text_w = self._text_want
        room = self.scrollable_content_region.width or self.size.width
        if self._text_w and room:
            over = self.fixed_width + GROUP_W * len(self._pairs) + 1 - room
            self._text_w = max(TEXT_MIN, self._text_want - max(0, (over + 1) // 2))

    def on_resize(self) -> None:
        self._fit_text()
        self._update_size()
        self._scroll_cursor_into_view()

    def action_columns(self, direction: int) -> None:
        """←/→: one pair (‖A‖ ‖B‖ cos) sideways; the row, id and text columns stay put."""
        x = self.scroll_offset.x
        target = (x // GROUP_W + direction) * GROUP_W if direction > 0 else ((x - 1) // GROUP_W) * GROUP_W
        self.scroll_to(x=max(0, min(target, self.max_scroll_x)), animate=False, immediate=True)

    def _scroll_cursor_into_view(self) -> None:
        keep_row_in_view(self, self.cursor, HEADER_ROWS)

    # ----- rendering

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        if self.result is None or not self.count:
            if y == 0 and self.message:
                return Strip([Segment(" " + self.message, base + self._style("tokens--dim"))]).adjust_cell_length(width, base)
            return Strip.blank(width, base)
        if y < HEADER_ROWS:
            fixed, moving = self._header(base)
        else:
            index = scroll_y + y - HEADER_ROWS
            if index >= self.count:
                return Strip.blank(width, base)
            fixed, moving = self._row(index, base)
        fixed_w = self.fixed_width
        moving = moving.crop(scroll_x, scroll_x + max(0, width - fixed_w))
        return Strip.join([fixed, moving]).adjust_cell_length(width, base)

    def _header(self, base: Style) -> tuple[Strip, Strip]:
        head = base + self._style("tokens--head")
        b_w, a_w, ida_w, idb_w = self._widths
        cells = [" ", ("row" if not a_w else "B#").rjust(b_w)[-b_w:]]
        if a_w:
            cells.append(" " + "A#".rjust(a_w))
        if ida_w:
            cells.append(" " + "A id".rjust(ida_w)[-ida_w:])
        if idb_w:
            cells.append(" " + "B id".rjust(idb_w)[-idb_w:])
        if self._text_w:
            cells += [" " + "A text".ljust(self._text_w), " " + "B text".ljust(self._text_w)]
        fixed = Strip([Segment("".join(cells), head)])
        moving = []
        for label, _m in self._pairs:
            moving.append(Segment("│", base + self._style("tokens--sep")))
            moving.append(Segment(f"‖A{label}‖".rjust(NUM_W) + " " + f"‖B{label}‖".rjust(NUM_W) + " "
                                  + f"cos{label}".rjust(NUM_W), head))
        return fixed, Strip(moving)

    def _row(self, i: int, base: Style) -> tuple[Strip, Strip]:
        result = self.result or {}
        rows = result.get("rows") or {}
        al = result.get("alignment") or {}
        b_w, a_w, ida_w, idb_w = self._widths
        b_row = rows.get("b_start", al.get("b_start", 0)) + i
        a_row = rows.get("a_start", al.get("a_start", 0)) + i
        a_valid = (result.get("a") or {}).get("valid_tokens")
        on_pad = a_valid is not None and a_row >= a_valid
        if i == self.cursor:
            base = base + self._style("tokens--cursor")
        dim = base + self._style("tokens--dim")
        fixed: list[Segment] = []
        cos_cells = [_at(m.get("per_token_cos"), i) for _l, m in self._pairs]
        if i == self._worst:
            fixed.append(Segment("◆", base + self._style("tokens--worst")))
        elif on_pad:
            fixed.append(Segment("░", base + self._style("tokens--pad")))
        elif any(c is None for c in cos_cells) and self._pairs:
            fixed.append(Segment("×", base + self._style("tokens--none")))
        elif any(i in rows_ for rows_ in self._massive.values()):
            fixed.append(Segment(MASSIVE_MARK, base + self._style("tokens--massive")))
        else:
            fixed.append(Segment(" ", base))
        row_style = base + self._style("tokens--pad") if on_pad else base
        fixed.append(Segment(str(b_row).rjust(b_w), row_style))
        if a_w:
            fixed.append(Segment(" " + str(a_row).rjust(a_w), row_style))
        a_id, b_id = _at(rows.get("a_ids"), i), _at(rows.get("b_ids"), i)
        differ = a_id is not None and b_id is not None and a_id != b_id
        for w, v in ((ida_w, a_id), (idb_w, b_id)):
            if w:
                style = base + self._style("tokens--iddiff") if differ else dim
                fixed.append(Segment(" ", base))
                fixed.append(Segment(("—" if v is None else str(v)).rjust(w), style))
        if self._text_w:
            for side_texts in (rows.get("a_text"), rows.get("b_text")):
                text = _at(side_texts, i)
                style = base + self._style("tokens--iddiff") if differ else base
                fixed.append(Segment(" ", base))
                fixed.append(Segment(_fit("—" if text is None else text, self._text_w), style))
        moving: list[Segment] = []
        for (_label, m), cos in zip(self._pairs, cos_cells, strict=False):
            moving.append(Segment("│", base + self._style("tokens--sep")))
            for key, side_norms in (("a_norms", m.get("a_norms")), ("b_norms", m.get("b_norms"))):
                v = _at(side_norms, i)
                text = "—" if v is None and side_norms is None else num(v, NUM_W)
                style = base + self._style("tokens--none") if v is None and side_norms is not None else base
                if i in self._massive.get((_label, key), ()):
                    style = base + self._style("tokens--massive")
                moving.append(Segment(text.rjust(NUM_W) + " ", style))
            moving.append(Segment(cos_text(cos, NUM_W), base + self._style(f"tokens--{cos_kind(cos)}")))
        return Strip(fixed), Strip(moving)


def massive_cells(result: ComparisonResult) -> dict[tuple[str, str], set[int]]:
    """Per (pair label, "a_norms"/"b_norms") the aligned rows that are massive activations
    (engines/read/massive.py's rule over that side's compared rows)."""
    out = {}
    for label, m in pairs(result):
        for key, side_norms in (("a_norms", m.get("a_norms")), ("b_norms", m.get("b_norms"))):
            rows = massive_rows(side_norms or [])
            if rows:
                out[(label, key)] = set(rows)
    return out


def massive_legend(result: ComparisonResult) -> str:
    """'▲ row 0: massive activation 25,139 (155x the median) in A1' for the strongest massive
    row of the comparison, '' when there is none."""
    best, ratio = "", 0.0
    for label, m in pairs(result):
        for key, side_norms in (("a_norms", m.get("a_norms")), ("b_norms", m.get("b_norms"))):
            norms = side_norms or []
            rows, med = massive_rows(norms), median_norm(norms)
            # a massive row's norm is finite: it is beyond the median
            top = max((v for r in rows if (v := norms[r]) is not None), default=0.0) / med if rows and med else 0.0
            if top > ratio:
                best, ratio = f"{MASSIVE_MARK} {massive_note(norms, rows)} in {key[0].upper()}{label}", top
    return best


def _fit(text: str, width: int) -> str:
    if any(ord(c) < 32 for c in text):  # tokens.py makes them visible; never raw on the terminal
        text = "".join(c if ord(c) >= 32 else "?" for c in text)
    return text[: width - 1] + "…" if len(text) > width else text.ljust(width)


def token_texts(result: ComparisonResult, index: int) -> str:
    """' A "x" · B "y"' for the aligned row `index` of a comparison read with a tokenizer, else ""."""
    rows = result.get("rows") or {}
    a, b = _at(rows.get("a_text"), index), _at(rows.get("b_text"), index)
    if a is None and b is None:
        return ""
    if a == b:
        return f' "{a}"'
    # a side without ids (a bare capture) has no text: only the other side's is shown
    return " " + " · ".join(f'{side} "{text}"' for side, text in (("A", a), ("B", b)) if text is not None)


def _at(values: list | None, i: int) -> Any:
    return values[i] if values is not None and 0 <= i < len(values) else None
