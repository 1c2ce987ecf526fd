"""The sample panel: header, per-slot statistics, per-token norm strips and first-k values.

It renders a summary dict (see COMMON.md) and holds only view state: the token cursor and
whether a newer file is loading. Strips are binned to the width on screen, so a 32k-token
sample costs as much to draw as a 40-token one.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from eagle3_tui.engines.model.capture_faults import fault_words
from eagle3_tui.engines.read.shapes import SPLIT_ADVICE
from eagle3_tui.engines.results.identify import IdentifiedBrief
from eagle3_tui.engines.results.summary import Summary, VocabFileInfo
from eagle3_tui.names import printable
from eagle3_tui.ui.shared import acceptance, norm_marks
from eagle3_tui.ui.shared.format import (
    append_parts,
    bin_kind,
    bin_of,
    bin_values,
    left_trim,
    num,
    spark_levels,
)

PLACEHOLDER = "Move the cursor onto a sample file (.pt, .ckpt, .safetensors)."
COMPACT_BELOW = 30  # rows available; below this the panel leaves out what the title bars repeat
NARROW = 64  # below this many columns, min/max move from the table to the strip lines


class SampleView(Widget):
    COMPONENT_CLASSES = {
        "sample--title",
        "sample--dim",
        "sample--head",
        "sample--label",
        "sample--ok",
        "sample--bad",
        "sample--warn",
        "sample--error",
        "sample--train",
        "sample--masked",
        "sample--pad",
        "sample--cursor",
        "sample--loading",
        "sample--outlier",
    }


    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.summary: Summary | None = None
        self.token = 0
        self.loading_name: str | None = None  # name of the file being loaded, if any
        self.compact = False
        self.placeholder = PLACEHOLDER
        #: the drafter's result for this sample (ui/shared/acceptance.py); None: no --drafter
        self.acceptance: acceptance.Shown | None = None

    # ----- state

    def show(self, summary: Summary) -> None:
        self.summary = summary
        self.acceptance = None
        tokens = summary.get("tokens") or 0
        self.token = max(0, min(self.token, tokens - 1)) if tokens else 0
        self.loading_name = None
        self.set_class(False, "-stale")
        self.refresh(layout=True)

    def clear(self, placeholder: str | None) -> None:
        """Show `placeholder` (a note on what is under the cursor) instead of a sample."""
        placeholder = placeholder or PLACEHOLDER
        if self.summary is None and self.loading_name is None and placeholder == self.placeholder:
            return  # moving over folders repaints nothing
        layout = self.summary is not None or self.placeholder.count("\n") != placeholder.count("\n")
        self.summary = None
        self.acceptance = None
        self.loading_name = None
        self.placeholder = placeholder
        self.set_class(False, "-stale")
        self.refresh(layout=layout)

    def mark_loading(self, name: str | None) -> None:
        """Dim the result on screen while `name` loads (the pane's title says which file).

        Called on every cursor move, so it only repaints when the panel's look changes.
        """
        was = self.loading_name
        self.loading_name = name
        self.set_class(name is not None and self.summary is not None, "-stale")
        if self.summary is None and name != was:
            self.refresh()  # one line either way (placeholder or "loading"): no layout pass

    def show_acceptance(self, result: acceptance.Shown | None) -> None:
        self.acceptance = result
        self.refresh(layout=True)

    def move_token(self, delta: int) -> None:
        tokens = (self.summary or {}).get("tokens") or 0
        if tokens:
            self.token = max(0, min(tokens - 1, self.token + delta))
            self.refresh()

    def set_token(self, index: int) -> None:
        self.move_token(index - self.token)

    # ----- rendering

    def _s(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def render(self) -> Text:
        width = max(20, self.size.width or 80)
        out = Text(no_wrap=True, overflow="crop")
        summary = self.summary
        if summary is None:
            if self.loading_name is not None:
                out.append(f"⟳ loading {printable(self.loading_name)}…", self._s("sample--loading"))
            else:
                out.append(_wrap(printable(self.placeholder, message=True), width), self._s("sample--dim"))
            return out
        if summary.get("error"):
            self._render_problem(out, summary, width)
            return out
        # short terminals (80x24) drop the blank separators, the path and the legend line
        parent_height = self.parent.size.height if isinstance(self.parent, Widget) else 0
        self.compact = 0 < parent_height < COMPACT_BELOW
        self._render_header(out, summary, width)
        self._render_table(out, summary, width)
        self._render_identified(out, summary, width)
        self._render_strips(out, summary, width)
        self._render_token(out, summary, width)
        out.rstrip()
        return out

    def _render_problem(self, out: Text, summary: Summary, width: int) -> None:
        out.append(left_trim(printable(summary.get("path", "")), width) + "\n", self._s("sample--title"))
        if summary.get("vocab_mapping"):
            _render_vocab_mapping(out, summary["vocab_mapping"], self._s("sample--label"), self._s("sample--dim"))
        elif summary.get("not_sample"):
            out.append("Not a sample: ", self._s("sample--warn"))
            out.append(_wrap(printable(str(summary["error"]), message=True), width,
                             first=len("Not a sample: ")) + "\n\n")
            # keys come from the file: as untrusted as its name
            contents = {printable(str(k)): printable(str(v), message=True)
                        for k, v in (summary.get("contents") or {}).items()}
            if contents:
                key_w = min(max(len(k) for k in contents), width // 2)
                out.append(f"{'key'.ljust(key_w)}  shape / dtype\n", self._s("sample--head"))
                for key, desc in contents.items():
                    out.append(f"{key[:key_w].ljust(key_w)}  ", self._s("sample--label"))
                    out.append(f"{desc}\n")
        else:
            # the panel does not wrap (tables), but an error is read whole: wrap it here
            out.append("✗ ", self._s("sample--error"))
            out.append(_wrap(printable(str(summary["error"]), message=True), width, first=2) + "\n",
                       self._s("sample--error"))

    def _gap(self, out: Text) -> None:
        if not self.compact:
            out.append("\n")

    def _render_header(self, out: Text, s: Summary, width: int) -> None:
        if not self.compact:
            out.append(left_trim(printable(s.get("path", "")), width) + "\n", self._s("sample--title"))
        lines: list[list[tuple[str, str | None]]] = [
            [(s.get("schema") or "?", "sample--label"), (str(s.get("dtype") or "?"), None),
             (f"computed {s.get('computed', '?')}", "sample--dim")],
            [(f"T {s.get('tokens')}", None), (f"valid {s.get('valid_tokens')}", None),
             (f"H {s.get('hidden')}", None), (f"k {len(s.get('slots') or [])}", None)],
        ]
        for parts in lines:
            append_parts(out, [(t, self._s(st) if st else "") for t, st in parts], width, self._s("sample--dim"))
        notes = []
        side = {"post": "after", "pre": "before"}.get(s.get("final_norm") or "")
        if s.get("final") is not None and s.get("final_norm"):
            # "?": the format's word and the file's norms disagree (engines/read/final_label.py)
            notes.append((f"final state is {side} the final norm" if side
                          else "final state: before or after the final norm not known", "sample--dim"))
        lm = s.get("loss_mask")
        if lm:
            notes.append((f"loss mask {lm.get('ones')}/{lm.get('total')}", "sample--dim"))
        pad = s.get("padding") or {}
        said = " ".join(str(w) for w in s.get("warnings") or [])
        if pad.get("trailing") and f"{pad['trailing']} padding rows" not in said:  # the warning says it
            notes.append((f"{pad['trailing']} padding rows", "sample--warn"))
        if notes:
            append_parts(out, [(t, self._s(st)) for t, st in notes], width, self._s("sample--dim"))
        # warnings and assumptions are read whole, at 80x24 too (the panel scrolls)
        for w in s.get("warnings") or []:
            text = _wrap(printable(str(w), message=True), width, first=2)
            out.append(f"⚠ {text}\n", self._s("sample--warn"))
        for a in s.get("assumptions") or []:
            a = str(a).replace(f"; {SPLIT_ADVICE}", "")  # the CLI's flags: the TUI takes none
            text = _wrap(printable(a, message=True), width, first=len("assumed: "))
            out.append(f"assumed: {text}\n", self._s("sample--dim"))
        acceptance.header_line(out, self.acceptance, self._s, width)

    def _rows(self, s: Summary) -> list[tuple[str, Mapping[str, Any]]]:
        """(label, part) per slot and the final state; a part read with the keys identify adds."""
        rows: list[tuple[str, Mapping[str, Any]]] = [
            (slot.get("label") or f"aux{i}", slot) for i, slot in enumerate(s.get("slots") or [])]
        if (final := s.get("final")) is not None:
            rows.append(("final", final))
        return rows

    def _render_table(self, out: Text, s: Summary, width: int) -> None:
        rows = self._rows(s)
        if not rows:
            return
        label_w = max(5, *(len(label) for label, _ in rows))
        wide = width >= NARROW
        # identified boundaries (2*, post*, 3≠2*) take a wider b column
        b_w = 4
        for _, slot in rows:
            if slot.get("identified"):
                b_w = max(b_w, 6, len(_identified_b(slot["identified"], slot.get("boundary"))[0]))
        cols = [("b", b_w), ("‖x‖ mean", 8)]
        if wide:
            cols += [("min", 7), ("max", 7)]
        cols += [("mean", 8), ("std", 7), ("NaN/Inf", 8 if wide else 7)]
        head = "slot".ljust(label_w) + "".join(" " + name.rjust(w) for name, w in cols)
        self._gap(out)
        out.append(head + "\n", self._s("sample--head"))
        for label, slot in rows:
            out.append(label.ljust(label_w), self._s("sample--label"))
            b, identified = slot.get("boundary"), slot.get("identified")
            if b is not None:
                b_text = str(b)
            elif slot is s.get("final") and s.get("final_norm") == "post":
                b_text = "post"  # after the final norm: past the last boundary
            else:
                b_text = slot.get("boundary_note") or "?"
            b_style = ""
            if identified:  # I / --model: the boundary the states match, marked *
                b_text, b_style = _identified_b(identified, b)
            values = [b_text, num(slot.get("norm_mean"), 8)]
            if wide:
                values += [num(slot.get("norm_min")), num(slot.get("norm_max"))]
            values += [num(slot.get("mean"), 8), num(slot.get("std"))]
            for i, ((_name, w), v) in enumerate(zip(cols, values, strict=False)):
                out.append(" " + v.rjust(w), self._s(b_style) if i == 0 and b_style else "")
            nan, inf = slot.get("nan") or 0, slot.get("inf") or 0
            w = cols[-1][1]
            if nan or inf:
                out.append(" " + f"{nan}/{inf}".rjust(w), self._s("sample--bad"))
            else:
                out.append(" " + "ok".rjust(w), self._s("sample--ok"))
            out.append("\n")

    def _render_identified(self, out: Text, s: Summary, width: int) -> None:
        """I / --model: per slot the boundary in words and its cosine (and the runner-up's), then
        what the CLI's identify warns about on the same file (the layer-id convention...)."""
        ident = s.get("identify")
        if not ident or ident.get("error"):
            return
        dim = self._s("sample--dim")
        layers = ident.get("layers")
        append_parts(out, [(f"identified against the model (L = {layers}, {ident.get('tokens')} tokens)", dim),
                           ("b*: identified", dim), ("~n*: nearest, none matches", dim)], width, dim)
        rows = self._rows(s)
        label_w = max(5, *(len(label) for label, _ in rows))
        for label, slot in rows:
            got = slot.get("identified")
            if not got:
                continue
            fault = got.get("fault")
            out.append(label.ljust(label_w) + " ", self._s("sample--label"))
            if fault:  # what the capture holds instead, in words (the b column has its short name)
                append_parts(out, [(f"{fault['short']}*: {fault_words(fault)}", self._s("sample--bad")),
                                   (f"cosine {fault['cosine']:.4f}", dim)], width - label_w - 1, dim)
                continue
            words, style = _boundary_words(got, layers)
            parts: list[tuple[str, Style | str]] = [(words, self._s(style))]
            if got.get("cosine") is not None:
                parts.append((f"cosine {got['cosine']:.4f}", ""))
            second = got.get("second") or {}
            if second.get("cosine") is not None:
                parts.append((f"next b={second.get('boundary')} {second['cosine']:.3f}", dim))
            append_parts(out, parts, width - label_w - 1, dim)
        for f in ident.get("findings") or []:
            mark, style = ("✗", "sample--error") if f.get("severity") == "error" else ("⚠", "sample--warn")
            text = f"{mark} {f.get('code')}: {printable(str(f.get('message')), message=True)}"
            out.append(_wrap(text, width) + "\n", self._s(style))

    def _render_strips(self, out: Text, s: Summary, width: int) -> None:
        rows = self._rows(s)
        tokens = s.get("tokens") or 0
        if not rows or not tokens:
            return
        label_w = max(5, *(len(label) for label, _ in rows))
        range_w = 14
        strip_w = max(4, width - label_w - 1 - range_w)
        ranges = bin_values(range(tokens), strip_w)
        valid = s.get("valid_tokens")
        valid = tokens if valid is None else valid
        kinds = bin_kind(ranges, valid, s.get("mask"))
        cursor_bin = bin_of(self.token, ranges)
        per = "token" if len(ranges) == tokens else f"{tokens / len(ranges):.1f} tokens"
        if not self.compact:
            out.append("\n")
            dim = self._s("sample--dim")
            append_parts(out, [("norm per token", self._s("sample--head")), (f"1 column = {per}", dim),
                               ("loss", self._s("sample--train")), ("no loss", self._s("sample--masked")),
                               ("padding", self._s("sample--pad")), ("█ above the scale", self._s("sample--outlier")),
                               ("▲ massive activation", self._s("sample--outlier"))],
                         width, dim)
        kind_style = {k: self._s(f"sample--{k}") for k in ("train", "masked", "pad")}
        cursor = self._s("sample--cursor")
        outlier = self._s("sample--outlier")
        named = self._marks(s)
        for (label, slot), (_l, marks, norms) in zip(rows, named, strict=False):
            out.append(label.ljust(label_w) + " ", self._s("sample--label"))
            if len(norms) == tokens:
                chars, flags, _low, _high = norm_marks.strip(norms, ranges, marks)
            else:
                chars, flags = spark_levels([None] * len(ranges), None, None), [False] * len(ranges)
            for i, ch in enumerate(chars):
                style = kind_style[kinds[i]] + (outlier if flags[i] else Style())
                out.append(ch, style + cursor if i == cursor_bin else style)
            out.append(" " + norm_marks.range_label(slot, marks).rjust(range_w - 1) + "\n", self._s("sample--dim"))
        mask = s.get("mask")
        out.append("mask".ljust(label_w) + " ", self._s("sample--label"))
        for i, kind in enumerate(kinds):
            ch = {"train": "━", "masked": "─", "pad": "░"}[kind] if mask is not None or kind == "pad" else "·"
            style = kind_style[kind] + (cursor if i == cursor_bin else Style())
            out.append(ch, style)
        out.append(" ")
        for ch, kind, word in (("━", "train", "on "), ("─", "masked", "off "), ("░", "pad", "pad")):
            out.append(ch, kind_style[kind])
            out.append(word, self._s("sample--dim"))
        out.append("\n")
        acceptance.draft_strip(out, self.acceptance, ranges, cursor_bin, label_w, self._s)
        note = norm_marks.strongest(named)
        if note and not self.compact:  # what the ▲ columns are; at 80x24 the range's ▲ and the token line say it
            out.append(_wrap(f"{norm_marks.MASSIVE_MARK} {note}", width) + "\n", self._s("sample--outlier"))

    def _marks(self, s: Summary) -> list[tuple[str, norm_marks.NormMarks, list]]:
        """(label, massive rows and scale, norms) per slot (engines/read/massive.py's rule)."""
        valid = s.get("valid_tokens")
        tokens = s.get("tokens") or 0
        out = []
        for label, slot in self._rows(s):
            norms = slot.get("norms") or []
            marks = norm_marks.norm_marks(norms, valid) if len(norms) == tokens else norm_marks.NormMarks()
            out.append((label, marks, norms))
        return out

    def _render_token(self, out: Text, s: Summary, width: int) -> None:
        rows = self._rows(s)
        tokens = s.get("tokens") or 0
        if not tokens:
            return
        t = self.token
        ids, mask = s.get("ids"), s.get("mask")
        valid = s.get("valid_tokens")
        valid = tokens if valid is None else valid
        self._gap(out)
        parts: list[tuple[str, Any]] = [(f"token {t}/{tokens}", self._s("sample--head"))]
        if ids is not None and t < len(ids):
            parts.append((f"id {ids[t]}", ""))
        if mask is not None and t < len(mask):
            parts.append((f"loss {'on' if mask[t] else 'off'}",
                          self._s("sample--train" if mask[t] else "sample--masked")))
        if t >= valid:
            parts.append(("padding", self._s("sample--pad")))
        note = acceptance.token_note(self.acceptance, t)
        if note:
            parts.append((note, self._s("sample--dim")))
        massive = norm_marks.at_row(self._marks(s), t)
        if massive:
            parts.append((massive, self._s("sample--outlier")))
        parts.append((f"first {s.get('first_k', '?')}", self._s("sample--dim")))
        append_parts(out, parts, width, self._s("sample--dim"))
        label_w = max(5, *(len(label) for label, _ in rows)) if rows else 5
        for label, slot in rows:
            out.append(label.ljust(label_w), self._s("sample--label"))
            first = slot.get("first") or []
            values = first[t] if t < len(first) else []
            room = (width - label_w) // 8
            for v in values[:room]:
                text = num(v, 7).rjust(8)
                out.append(text, self._s("sample--bad") if v is None else "")
            if len(values) > room:
                out.append(" …", self._s("sample--dim"))
            out.append("\n")


def _boundary_words(got: IdentifiedBrief, layers: int | None) -> tuple[str, str]:
    """'b 3 · output of layer 2' for an identified slot, with its style; the final norm's output,
    the last layer's output, the embeddings, or the nearest boundary when none matches."""
    b = got.get("boundary")
    if got.get("norm") == "post":
        return "after the final norm", "sample--ok"
    if b is None:
        near = got.get("nearest")
        where = "the final norm's output" if near == "post" else f"b {near}"
        return f"matches no boundary (nearest {where})", "sample--warn"
    if b == 0:
        words = "b 0 · the embeddings"
    elif layers is not None and b == layers:
        words = f"b {b} · output of layer {b - 1}, before the final norm"
    else:
        words = f"b {b} · output of layer {b - 1}"
    return words, ("sample--warn" if got.get("status") == "scaled" else "sample--ok")


def _identified_b(got: IdentifiedBrief, said: int | None) -> tuple[str, str]:
    """(b column text, style) of an identified slot: 2* (the file said nothing or the same),
    post* after the final norm, ~3* when no boundary matches (3 the nearest), 3≠2* when the file's
    own label disagrees with the states; a capture fault its short name (5+1*: b = 5 one token
    late, 5mlp*: layer 5's MLP output without the residual, 5mid*, 5nrm*: see capture_faults)."""
    if got.get("fault"):
        return f"{got['fault']['short']}*", "sample--bad"
    if got.get("boundary") is not None:
        text = f"{got['boundary']}*"
        if said is not None and said != got["boundary"]:
            return f"{said}≠{text}", "sample--bad"
        return text, ("sample--warn" if got.get("status") == "scaled" else "sample--ok")
    if got.get("norm"):
        return f"{got['norm']}*", "sample--ok"
    return f"~{got.get('nearest', '?')}*", "sample--warn"


def _render_vocab_mapping(out: Text, vm: VocabFileInfo, label: Style, dim: Style) -> None:
    """A drafter's vocab_mapping.pt: how many target tokens the drafter can propose."""
    out.append("Draft vocabulary", label)
    out.append(" (vocab_mapping.pt)\n", dim)
    share = f" ({vm['share']:.1%} of the target vocabulary)" if vm.get("share") is not None else ""
    out.append(f"draft {vm['draft']:,} tokens · target {vm['target']:,} tokens{share}\n")
    if vm.get("identity"):
        out.append("every target token is in the draft vocabulary\n", dim)
    out.append("first target ids: " + " ".join(map(str, vm.get("first_ids") or [])) + "\n", dim)
    out.append("the share of loss tokens it covers: per sample below each sample's text, over the "
               "dataset in `eagle3-tui scan`\n", dim)


def _wrap(text: str, width: int, *, first: int = 0) -> str:
    """Wrap `text` to `width` columns; the first line already has `first` columns used."""
    lines = textwrap.wrap(" " * first + text, max(10, width - 1), subsequent_indent="  ")
    return "\n".join(lines)[first:] if lines else ""
