"""The sample's tokens as text: the text with its loss-masked spans highlighted ("what is trained"),
the draft-vocabulary share, and a virtual table of every token (index, id, text, loss, per-slot
norms) whose cursor is the sample panel's token cursor.

The table draws only the rows on screen (Textual's Line API), so a 100k-token sample costs what
a 20-token one does. Without a tokenizer the table still shows ids; the text block says why not.
`/` in the table searches the text and jumps to the token holding the match; n and N go to the
next and previous match while a search is active (else they keep their app-wide meaning).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.containers import Vertical
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Input

from eagle3_tui.engines.read.tokens import visible
from eagle3_tui.engines.results.summary import SampleVocab, Summary
from eagle3_tui.names import printable
from eagle3_tui.ui import keys
from eagle3_tui.ui.shared.format import num
from eagle3_tui.ui.shared.messages import StatusMessage
from eagle3_tui.ui.shared.row_cursor import RowCursor

TEXT_LINES = 6  # the text block's height when the text is longer
NORM_W = 7
TEXT_MIN = 12  # the text column's least width: a narrower panel scrolls the row sideways


def _flat(text: str) -> str:
    """Decoded text on one line: newlines and tabs visible (the block wraps by itself)."""
    return printable(text.replace("\n", "↵").replace("\t", "⇥"), message=True)


def elide(parts: list[tuple[str, bool]], budget: int) -> list[tuple[str, bool]]:
    """Shorten (text, is_loss) parts to about `budget` characters: the prompt parts give way
    first (their middle becomes …), then the loss parts; a part that fits is left whole."""
    total = sum(len(t) for t, _ in parts)
    if total <= budget:
        return parts
    loss = sum(len(t) for t, on in parts if on)
    others = [i for i, (_, on) in enumerate(parts) if not on]
    out = list(parts)
    if loss + 9 * len(others) <= budget:
        room, rest = budget - loss, total - loss
        for i in others:
            out[i] = (_middle(parts[i][0], max(9, len(parts[i][0]) * room // max(1, rest))), False)
        return out
    for i in others:
        out[i] = (_middle(parts[i][0], 3), False)
    room = max(len(parts), budget - 3 * len(others))
    for i, (t, on) in enumerate(parts):
        if on:
            out[i] = (_middle(t, max(5, len(t) * room // max(1, loss))), True)
    return out


def _middle(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    if width <= 3:
        return "…"
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


class LossText(Widget):
    """The decoded text of the sample, loss-masked runs highlighted; plus the draft-vocab line."""

    COMPONENT_CLASSES = {"loss-text--loss", "loss-text--prompt", "loss-text--dim", "loss-text--warn"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.summary: Summary | None = None
        self.last: Text = Text()

    def show(self, summary: Summary | None) -> None:
        self.summary = summary
        self.refresh(layout=True)

    def _s(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def highlighted(self) -> list[str]:
        """The pieces drawn in the loss style, in order (what the user sees as trained)."""
        loss = self._s("loss-text--loss")
        return [self.last.plain[sp.start:sp.end] for sp in self.last.spans if sp.style == loss]

    def render(self) -> Text:
        self.last = self._text(max(20, self.size.width or 80))
        return self.last

    def _text(self, width: int) -> Text:
        s: Mapping[str, Any] = self.summary or {}  # with the text and vocab keys the decoders add
        out = Text(overflow="fold")
        if s.get("text_error"):
            out.append("text: " + printable(s["text_error"], message=True), self._s("loss-text--warn"))
        elif s.get("runs") is None:
            if s.get("ids") is not None:
                out.append("ids only: start with --tokenizer PATH (or --model) to read the tokens as text",
                           self._s("loss-text--dim"))
        else:
            parts = [(_flat(r["text"]), r["loss"]) for r in s["runs"] if not r.get("pad")]
            budget = width * TEXT_LINES - 2
            for text, on in elide(parts, budget):
                out.append(text, self._s("loss-text--loss" if on else "loss-text--prompt"))
            if s.get("mask") is None:
                out.append("  (no loss mask in this file)", self._s("loss-text--dim"))
        vocab = s.get("vocab")
        if vocab:
            out.append("\n" if out.plain else "")
            out.append_text(_vocab_line(vocab, self._s("loss-text--warn"), self._s("loss-text--dim")))
        elif s.get("vocab_error"):
            out.append(("\n" if out.plain else "") + "draft vocab: " + printable(_short(s["vocab_error"]), message=True),
                       self._s("loss-text--warn"))
        return out


def _short(message: str) -> str:
    """A vocab mapping's error with its path cut to the last two parts (the folder is on screen)."""
    head, sep, rest = message.partition(": ")
    if sep and "/" in head:
        head = "/".join(head.rstrip("/").split("/")[-2:])
    return head + sep + rest


def _vocab_line(v: SampleVocab, warn: Style, dim: Style) -> Text:
    # lazy: vocab.py (stdlib-only at import: no torch) costs ~12 ms the first frame does not pay
    from eagle3_tui.engines.model.vocab import WARN_BELOW

    line = Text(no_wrap=False, overflow="fold")
    total = v["in"] + v["out"]
    coverage = v.get("coverage")
    if coverage is None:
        line.append(f"draft vocab ({v['draft']:,} tokens): no loss tokens to check", dim)
        return line
    style = warn if coverage < WARN_BELOW else dim
    line.append(f"draft vocab: {coverage:.1%} of {total:,} loss tokens", style)
    if v["out"]:
        line.append(f" · {v['out']:,} outside: ", style)
        shown = [f"{o.get('text', o['id'])}@{o['index']}" for o in v["oov"]]
        # the texts are already made visible (tokens.py): printable only stops what is left
        line.append(" ".join(printable(str(x), message=True) for x in shown[:20]) + (" …" if v["out"] > 20 else ""))
    return line


class TokenTable(RowCursor, ScrollView, can_focus=True):
    """Every token of the sample as a row; only the rows on screen are drawn."""

    BINDINGS: ClassVar[list[BindingType]] = [*keys.TOKEN_TABLE]

    COMPONENT_CLASSES = {"token-table--head", "token-table--cursor", "token-table--loss",
                         "token-table--masked", "token-table--pad", "token-table--dim", "token-table--match"}

    class CursorMoved(Message):
        """The user moved the token cursor in the table (the sample panel follows)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class SearchRequested(Message):
        pass

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.summary: Summary | None = None
        self.cursor = 0
        self.query_text = ""
        self._joined = ""  # the tokens' texts joined, lower case, for search
        self._starts: list[int] = []
        self._match_rows: set[int] = set()

    # ----- state

    @property
    def rows(self) -> int:
        return (self.summary or {}).get("tokens") or 0

    def show(self, summary: Summary | None) -> None:
        self.summary = summary if summary and not summary.get("error") else None
        self.cursor = max(0, min(self.cursor, self.rows - 1))
        self._joined, self._starts, self._match_rows = "", [], set()
        if self.query_text:
            self.query_text = ""
            self.refresh_bindings()
        self._update_size()
        self._follow()
        self.refresh()

    def set_cursor(self, index: int, *, announce: bool = False) -> None:
        if not self.rows:
            return
        index = max(0, min(self.rows - 1, index))
        if index != self.cursor:
            self.cursor = index
            self._follow()
            self.refresh()
            if announce:
                self.post_message(self.CursorMoved(index))

    def _follow(self) -> None:
        """Keep the cursor row in view (row 0 of the widget is the fixed header)."""
        body = max(1, self.size.height - 1)
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False, immediate=True)

    def on_resize(self) -> None:
        self._update_size()
        self._follow()

    # ----- keys (j/k, page, g/G: RowCursor)

    @property
    def item_count(self) -> int:
        return self.rows

    def move_to(self, index: int) -> None:
        self.set_cursor(index, announce=True)

    def action_search(self) -> None:
        self.post_message(self.SearchRequested())

    def action_match(self, step: int) -> None:
        self.run_search(self.query_text, step=step)

    def run_search(self, query: str, step: int = 1) -> None:
        said = self.search(query, step=step)
        if said:
            self.post_message(_status(said, error=said.endswith("not in this sample")))

    def action_end_search(self) -> None:
        query = self.query_text
        self.query_text = ""
        self._match_rows = set()
        self.refresh()
        self.refresh_bindings()  # the footer's "n Next match" goes: n, N step through files again
        if query:
            self.post_message(_status(f"/{query}: search ended (n, N step through the files again)"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # n/N and esc belong to the search while one is active; otherwise they fall through to
        # the screen and the app (next sample, bookmark note, clear filter)
        if action in ("match", "end_search"):
            return bool(self.query_text)
        return True

    # ----- search

    def _index(self) -> None:
        if self._starts or not self.summary or self.summary.get("text") is None:
            return
        pos, starts = 0, []
        for piece in self.summary["text"]:
            starts.append(pos)
            pos += len(piece)
        self._starts = starts
        self._joined = "".join(self.summary["text"]).lower()

    def search(self, query: str, *, step: int = 1) -> str:
        """Move the cursor to the next (step 1) or previous (-1) token whose text holds the start
        of a match of `query` (whitespace as the table shows it); returns a status line."""
        if query != self.query_text:
            self.query_text = query
            self.refresh_bindings()  # n/N and esc belong to the search while one is active
        if not query:
            self._match_rows = set()
            self.refresh()
            return ""
        if not self.summary or self.summary.get("text") is None:
            return "search needs the token text: start with --tokenizer PATH"
        self._index()
        needle = visible(query).lower()
        hits, at = [], self._joined.find(needle)
        while at >= 0:
            hits.append(bisect_right(self._starts, at) - 1)
            at = self._joined.find(needle, at + 1)
        self._match_rows = set(hits)
        self.refresh()
        if not hits:
            return f"/{query}: not in this sample"
        rows = sorted(set(hits))
        if step > 0:
            after = [r for r in rows if r > self.cursor]
            target = after[0] if after else rows[0]
        else:
            before = [r for r in rows if r < self.cursor]
            target = before[-1] if before else rows[-1]
        self.set_cursor(target, announce=True)
        return f"/{query}: token {target} ({rows.index(target) + 1} of {len(rows)} tokens; n/N next/previous)"

    # ----- drawing

    def _s(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def _columns(self) -> list[str]:
        s = self.summary or {}
        names = [slot.get("label") or f"aux{i}" for i, slot in enumerate(s.get("slots") or [])]
        if s.get("final") is not None:
            names.append("final")
        return names

    def _norm_lists(self) -> list[list]:
        s = self.summary or {}
        final = s.get("final")
        parts = list(s.get("slots") or []) + ([final] if final is not None else [])
        return [p.get("norms") or [] for p in parts]

    def _layout(self) -> tuple[int, int, int, int]:
        """(index, id, text widths, the whole row's width): the text takes what the screen leaves
        and at least TEXT_MIN; a row wider than the screen scrolls sideways (←/→)."""
        s = self.summary or {}
        idx_w = max(5, len(str(self.rows)) + 1)
        id_w = max(6, len(str(max(s.get("ids") or [0]))) + 1)
        rest = id_w + 2 + 5 + len(self._columns()) * (NORM_W + 1)
        text_w = max(TEXT_MIN, (self.scrollable_content_region.width or 80) - idx_w - 1 - rest)
        return idx_w, id_w, text_w, idx_w + 1 + text_w + rest

    def _update_size(self) -> None:
        width = self._layout()[3] if self.summary else self.scrollable_content_region.width
        self.virtual_size = Size(width, self.rows + 1)

    def action_columns(self, direction: int) -> None:
        """←/→: one norm column sideways; the token index stays put."""
        x = self.scroll_offset.x + direction * (NORM_W + 1)
        self.scroll_to(x=max(0, min(x, self.max_scroll_x)), animate=False, immediate=True)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if not self.summary:
            return Strip.blank(width)
        idx_w, id_w, text_w, _total = self._layout()
        scroll_x = int(self.scroll_offset.x)
        if y == 0:
            head = f"{'id':>{id_w}}  {'text':<{text_w}} loss" + "".join(
                f" {c[:NORM_W]:>{NORM_W}}" for c in self._columns())
            style = self._s("token-table--head")
            fixed, moving = Strip([Segment(f"{'#':>{idx_w}} ", style)]), Strip([Segment(head, style)])
        else:
            t = int(self.scroll_offset.y) + y - 1
            if t >= self.rows:
                return Strip.blank(width)
            fixed, moving = self._row(t, idx_w, id_w, text_w)
        strip = Strip.join([fixed, moving.crop(scroll_x, scroll_x + max(0, width - idx_w - 1))])
        strip = strip.crop_extend(0, width, None)
        if y and int(self.scroll_offset.y) + y - 1 == self.cursor:
            strip = strip.apply_style(self._s("token-table--cursor"))
        return strip

    def _row(self, t: int, idx_w: int, id_w: int, text_w: int) -> tuple[Strip, Strip]:
        s = self.summary or {}
        ids, mask, text = s.get("ids"), s.get("mask"), s.get("text")
        valid = s.get("valid_tokens")
        valid = self.rows if valid is None else valid
        pad = t >= valid
        on = mask is not None and t < len(mask) and bool(mask[t])
        row_style = self._s("token-table--pad" if pad else ("token-table--loss" if on else "token-table--masked"))
        piece = text[t] if text is not None and t < len(text) else ""
        if any(ord(c) < 32 for c in piece):  # tokens.py makes them visible; an old agent may not
            piece = printable(piece)
        if len(piece) > text_w:
            piece = piece[: text_w - 1] + "…"
        loss = "pad" if pad else ("·" if mask is None else ("on" if on else "off"))
        segs = [
            Segment(f"{ids[t] if ids is not None and t < len(ids) else '':>{id_w}}  ", row_style),
            Segment(piece.ljust(text_w), row_style + (self._s("token-table--match") if t in self._match_rows else Style())),
            Segment(f" {loss:<4}", row_style),
        ]
        for norms in self._norm_lists():
            v = norms[t] if t < len(norms) else None
            segs.append(Segment(" " + num(v, NORM_W).rjust(NORM_W)))
        return Strip([Segment(f"{t:>{idx_w}} ", self._s("token-table--dim"))]), Strip(segs)


class TokenPanel(Vertical):
    """The text block, the search box and the token table, under the sample panel."""

    def compose(self):
        yield LossText(id="loss-text")
        yield Input(placeholder="search the text…", id="token-search")
        yield TokenTable(id="token-table")

    @property
    def table(self) -> TokenTable:
        return self.query_one(TokenTable)

    def show(self, summary: Summary | None, cursor: int = 0) -> None:
        """Show `summary`'s tokens (None: nothing; the panel hides)."""
        if not self.is_attached or not self.children:
            return
        usable = summary is not None and not summary.get("error") and (summary.get("tokens") or 0) > 0
        self.display = usable
        self.query_one(LossText).show(summary if usable else None)
        table = self.table
        table.show(summary if usable else None)
        table.set_cursor(cursor)

    def on_token_table_search_requested(self, message: TokenTable.SearchRequested) -> None:
        message.stop()
        box = self.query_one("#token-search", Input)
        box.display = True
        box.value = ""
        self.screen.set_focus(box)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "token-search":
            return
        event.stop()
        event.input.display = False
        table = self.table
        self.screen.set_focus(table)
        # run by the table: a message created here would count this panel as its sender and
        # stop bubbling right above it, before the screen that moves the sample's cursor
        table.call_next(table.run_search, event.value)

    def on_key(self, event) -> None:
        box = self.query_one("#token-search", Input)
        if event.key == "escape" and box.has_focus:
            event.stop()
            box.display = False
            self.screen.set_focus(self.table)


def _status(text: str, *, error: bool = False) -> Message:
    return StatusMessage(text, error=error)
