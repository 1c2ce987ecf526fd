"""The compare view's text panels: the two sides, the findings, the values of the token under
the cursor, and the per-slot metrics with the cross-slot cosine matrix.

Each renders from the comparison dict (see docs/compare.md) and the token index it is given;
none does I/O.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from eagle3_tui.engines.results.compare import ComparisonResult, PairMetrics
from eagle3_tui.names import printable
from eagle3_tui.ui.compare.format import (
    SEVERITY_MARK,
    TITLES,
    alignment_text,
    cos_kind,
    cos_text,
    pairs,
    row_count,
    serious,
    side_facts,
    text_error,
    within_bf16,
)
from eagle3_tui.ui.shared.format import fixed, left_trim, num

#: screens shorter than this show one line per side and one bottom panel at a time
TALL = 34

CLASSES = {
    "cmp--head", "cmp--dim", "cmp--label", "cmp--side-a", "cmp--side-b", "cmp--error",
    "cmp--warning", "cmp--info", "cmp--ok", "cmp--match", "cmp--near", "cmp--far", "cmp--none",
    "cmp--differs", "cmp--cell-match", "cmp--cell-near", "cmp--cell-far", "cmp--cell-none",
}


class ComparePanel(Widget):
    """A text panel of the compare view (its styles: ComparePanel in app.tcss)."""

    COMPONENT_CLASSES = CLASSES

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.result: ComparisonResult | None = None

    def s(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def show(self, result: ComparisonResult | None) -> None:
        self.result = result
        self.refresh(layout=True)

    @property
    def tall(self) -> bool:
        return (self.screen.size.height or self.app.size.height) >= TALL


class CompareSides(ComparePanel):
    """A and B: path and facts, and how the rows were aligned (one line when the screen is short)."""


    def __init__(self, a: str, b: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.a, self.b = a, b
        #: what A and B are: ("training", "inference"), the other way round after a swap
        self.roles = ("training", "inference")

    def render(self) -> Text:
        width = max(20, self.size.width or 80)
        r = self.result or {}
        if not self.tall:
            # one line where it fits, wrapped where it does not (never cut): the rows' count is in
            # the token table's title
            out = Text()
            al = r.get("alignment")
            how = {"ids": "by ids", "hidden": "by states", "position": "by position"}.get(str(al.get("method")), "") if al else ""
            out.append(f"A {self.roles[0]} ", self.s("cmp--side-a"))
            out.append(printable(_base(self.a)))
            out.append(" ⇄ ", self.s("cmp--dim"))
            out.append(f"B {self.roles[1]} ", self.s("cmp--side-b"))
            out.append(printable(_base(self.b)))
            if al:
                out.append(f" · {how} {al.get('offset', 0):+d}", self.s("cmp--dim"))
            return out
        out = Text(no_wrap=True, overflow="ellipsis")
        for tag, path, style, role in (("A", self.a, "cmp--side-a", self.roles[0]),
                                       ("B", self.b, "cmp--side-b", self.roles[1])):
            out.append(f"{tag} {role:<9} ", self.s(style))
            header = (r.get("a") if tag == "A" else r.get("b")) or {}
            facts = side_facts(header) if "schema" in header else ""
            room = max(10, width - 12 - (len(facts) + 3 if facts else 0))
            out.append(left_trim(printable(path), room))
            if facts:
                out.append(" · " + facts, self.s("cmp--dim"))
            out.append("\n")
        text = alignment_text(r) if r.get("alignment") else "…"
        if r.get("computed"):
            text += f" · computed {r['computed']}"
        out.append(text, self.s("cmp--dim"))
        return out


class CompareFindings(ComparePanel):
    """The findings, worst first, in plain words with the engine's message and its numbers."""


    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.note: tuple[str, str] | None = ("comparing…", "cmp--dim")

    def show_note(self, text: str, style: str = "cmp--dim") -> None:
        self.result = None
        self.note = (text, style)
        self.refresh(layout=True)

    def show(self, result: ComparisonResult | None) -> None:
        self.note = None
        super().show(result)

    def render(self) -> Text:
        out = Text()
        r = self.result
        if r is None:
            text, style = self.note or ("", "cmp--dim")
            out.append(printable(text, message=True), self.s(style))
            return out
        if "error" in r:
            for tag, side in (("a", r.get("a") or {}), ("b", r.get("b") or {})):
                if "error" in side:
                    kind = "not a sample" if side.get("not_sample") else "cannot be loaded"
                    out.append(f"✗ {tag.upper()} {kind}: ", self.s("cmp--error"))
                    out.append(printable(f"{side.get('path', '')}: {side['error']}", message=True) + "\n")
            if not any("error" in (side or {}) for side in (r.get("a"), r.get("b"))):
                out.append(f"✗ {printable(str(r['error']), message=True)}\n", self.s("cmp--error"))
            out.rstrip()
            return out
        findings = r.get("findings") or []
        if not serious(r):
            out.append("✓ no warning or error: ", self.s("cmp--ok"))
            out.append("B matches A within bf16 noise (same layers, same order, same scale)")
            if findings:
                out.append("\n")
        for f in findings:
            sev = f.get("severity", "info")
            code = f.get("code")
            sev_style = self.s(f"cmp--{sev}") if sev in ("error", "warning", "info") else Style()
            out.append(f"{SEVERITY_MARK.get(sev, '•')} {TITLES.get(str(code), code)}", sev_style)
            out.append(f" ({code}) ", self.s("cmp--dim"))
            out.append(printable(str(f.get("message", "")), message=True), self.s("cmp--info") if sev == "info" else Style())
            out.append("\n")
        if why := text_error(r):  # the numbers are compared; the tokenizer could not give the text
            out.append("no token text: " + printable(why, message=True), self.s("cmp--warning"))
        out.rstrip()
        return out


class CompareValues(ComparePanel):
    """The first values of the token under the cursor, training side by inference side."""


    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.index = 0

    def set_index(self, index: int) -> None:
        self.index = index
        self.refresh(layout=True)

    def render(self) -> Text:
        width = max(30, self.size.width or 80)
        out = Text(no_wrap=True, overflow="crop")
        r = self.result
        if not r or "error" in r or not row_count(r):
            return out
        i = self.index
        rows = r.get("rows") or {}
        al = r.get("alignment") or {}
        b_row = rows.get("b_start", al.get("b_start", 0)) + i
        a_row = rows.get("a_start", al.get("a_start", 0)) + i
        out.append(f"token {i}/{row_count(r)}", self.s("cmp--head"))  # 0-based, as the rows
        out.append(f" · B row {b_row}" + (f" = A row {a_row}" if a_row != b_row else ""), self.s("cmp--dim"))
        for tag, ids in (("a", rows.get("a_ids")), ("b", rows.get("b_ids"))):
            if ids is not None and i < len(ids):
                out.append(f" · {tag.upper()} id {ids[i]}")
        mask = rows.get("a_loss_mask")
        if mask is not None and i < len(mask):
            out.append(" · loss " + ("on" if mask[i] else "off"), self.s("cmp--dim"))
        a_valid = (r.get("a") or {}).get("valid_tokens")
        if a_valid is not None and a_row >= a_valid:
            out.append(" · A padding", self.s("cmp--warning"))
        out.append("\n")
        plist = pairs(r)
        label_w = max(len(_pair_name(label, m)) for label, m in plist) if plist else 4
        room = max(8, (width - label_w - 8) // 2)
        longest = max((len(_at(first, i) or []) for _l, m in plist for first in (m.get("a_first"), m.get("b_first"))),
                      default=0)
        per = max(1, min(room // 8, longest))
        for label, m in plist:
            a_vals, b_vals = _at(m.get("a_first"), i) or [], _at(m.get("b_first"), i) or []
            out.append(_pair_name(label, m).ljust(label_w), self.s("cmp--label"))
            out.append("  A", self.s("cmp--side-a"))
            for v in a_vals[:per]:
                out.append(num(v, 7).rjust(8), self.s("cmp--none") if v is None else Style())
            out.append(" " * (8 * max(0, per - len(a_vals[:per]))))
            out.append("  B", self.s("cmp--side-b"))
            for j, v in enumerate(b_vals[:per]):
                a = a_vals[j] if j < len(a_vals) else None
                style = Style() if within_bf16(a, v) else self.s("cmp--differs")
                out.append(num(v, 7).rjust(8), self.s("cmp--none") if v is None else style)
            if not a_vals and not b_vals:
                out.append("  (no per-token values in this result)", self.s("cmp--dim"))
            out.append("\n")
        out.rstrip()
        return out


class CompareMetrics(ComparePanel):
    """Per-slot metrics between the sides, and the cross-slot mean cosine matrix as a grid."""


    def render(self) -> Text:
        width = max(40, self.size.width or 80)
        r = self.result
        if not r or "error" in r:
            return Text()
        plist = pairs(r)
        if not plist:
            return Text("No slot pair was measured (see the findings).", self.s("cmp--dim"))
        wide = width >= 100
        table = self._table(plist, wide)
        grid = self._matrix(r)
        table_w = max(t.cell_len for t in table)
        grid_w = max((g.cell_len for g in grid), default=0)
        out = Text(no_wrap=True, overflow="crop")
        gap = 3 if table_w + 3 + grid_w <= width else 2
        if grid and table_w + gap + grid_w <= width:
            for n in range(max(len(table), len(grid))):
                left = table[n] if n < len(table) else Text()
                out.append_text(left)
                out.append(" " * (table_w - left.cell_len + gap))
                if n < len(grid):
                    out.append_text(grid[n])
                out.append("\n")
        else:
            for line in table + ([Text()] if grid else []) + grid:
                out.append_text(line)
                out.append("\n")
        out.rstrip()
        return out

    def _table(self, plist: list[tuple[str, PairMetrics]], wide: bool) -> list[Text]:
        label_w = max(4, *(len(_pair_name(label, m)) for label, m in plist))
        cols: list[tuple[str, int]] = [("pair", label_w), ("cos mean", 8), ("cos min", 8), ("B/A", 6)]
        if wide:
            cols += [("spread", 6), ("max|B-A|", 8)]
            cols += [("rel L2", 6), ("bf16 ok", 7), ("worst", 6)]
        else:  # 80 columns: narrow enough that the matrix still fits beside it
            cols = [(cols[0][0], label_w), ("cos mean", 8), ("cos min", 7), ("B/A", 5),
                    ("rel L2", 6), ("bf16", 6), ("worst", 5)]
        head = Text(no_wrap=True)
        for n, (name, w) in enumerate(cols):
            head.append((" " if n else "") + (name.ljust(w) if n == 0 else name.rjust(w)), self.s("cmp--head"))
        lines = [head]
        for label, m in plist:
            line = Text(no_wrap=True)
            line.append(_pair_name(label, m).ljust(cols[0][1]), self.s("cmp--label"))
            if m.get("cos_mean") is None:
                line.append("  no finite rows to compare", self.s("cmp--none"))
                lines.append(line)
                continue
            cells: list[tuple[str, Style]] = [
                (cos_text(m["cos_mean"], 8), self.s(f"cmp--{cos_kind(m['cos_mean'])}")),
                (cos_text(m.get("cos_min"), 8), self.s(f"cmp--{cos_kind(m.get('cos_min'))}")),
                (fixed(m.get("norm_ratio_median"), 3), Style()),
            ]
            if wide:
                cells += [(fixed(m.get("norm_ratio_std"), 3), Style()), (num(m.get("max_abs_err"), 8), Style())]
            bf16 = m.get("within_bf16_tol")
            cells += [
                (fixed(m.get("rel_l2_err"), 3), Style()),
                (f"{100 * bf16:.1f}%" if bf16 is not None else "—", Style()),
                (str(m.get("worst_b_row", "—")), self.s("cmp--dim")),
            ]
            for (_name, w), (text, style) in zip(cols[1:], cells, strict=False):
                line.append(" " + text.rjust(w), style)
            lines.append(line)
        return lines

    def _matrix(self, r: ComparisonResult) -> list[Text]:
        matrix = r.get("matrix") or []
        if not matrix or not matrix[0]:
            return []
        cell_w = 7
        head = Text(no_wrap=True)
        head.append("B\\A ", self.s("cmp--head"))
        for i in range(len(matrix[0])):
            head.append(f"A{i}".center(cell_w), self.s("cmp--side-a"))
        lines = [head]
        for j, row in enumerate(matrix):
            line = Text(no_wrap=True)
            line.append(f"B{j}".ljust(4), self.s("cmp--side-b"))
            for v in row:
                line.append(" " + cos_text(v, cell_w - 2) + " ", self.s(f"cmp--cell-{cos_kind(v)}"))
            lines.append(line)
        return lines


def _pair_name(label: str, m: PairMetrics) -> str:
    if label == "f":
        return "final"
    ab, bb = m.get("a_boundary"), m.get("b_boundary")
    if ab is None and bb is None:
        return f"slot {label}"
    return f"{label} b{ab if ab is not None else '?'}/{bb if bb is not None else '?'}"


def _at(values: list | None, i: int) -> Any:
    return values[i] if values is not None and 0 <= i < len(values) else None


def _base(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1] or path
