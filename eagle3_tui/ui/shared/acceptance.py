"""The drafter's acceptance in the views, when the TUI was given --drafter.

- Sample view: one header line (top-1, per-step acceptance, tau) and a `draft` strip under the
  norm strips marking the columns where the drafter missed (engines/model/accept.py's per_token).
  The numbers come from a worker the main screen starts after the summary (Source.accept, next
  to the data); results are cached per file (SampleAcceptance) and a move to another file
  cancels the run.
- Compare view: A's and B's acceptance side by side, each with what it was scored against, and,
  when the comparison found B's slots in another order, B's acceptance with its slots fed to fc
  in A's order (accept's `order=`), which tells whether the order explains the collapse; a
  second line says why B's figure is not A's even when the states match (other targets, other
  rows: engines/model/accept_words.py why_b_differs).

Rendering helpers only read dicts; no I/O here except through the Source in the workers.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.widget import Widget

from eagle3_tui.engines.model.accept_words import SHORT, pct, targets, tau, why_b_differs
from eagle3_tui.engines.results.accept import AcceptResult
from eagle3_tui.engines.results.compare import ComparisonResult
from eagle3_tui.engines.results.summary import Summary
from eagle3_tui.names import printable
from eagle3_tui.sources.base import SourceError
from eagle3_tui.sources.tokenizer import with_token_text
from eagle3_tui.ui.shared.format import append_parts

if TYPE_CHECKING:
    from eagle3_tui.sources.base import Source
    from eagle3_tui.target import Target
    from eagle3_tui.ui.start.analysis import Analysis

#: what a view shows for the drafter: an AcceptResult, or a mark (RUNNING, {"error": why})
Shown = Mapping[str, Any]

RUNNING: Shown = {"running": True}


class AcceptanceLoaded(Message):
    """Source.accept finished (or failed) for `path` with `order` (None: the file's own order)."""

    def __init__(self, key: tuple, result: Shown) -> None:
        super().__init__()
        self.key = key
        self.result = result


def cache_key(path: str, drafter: str, model: str | None, order: list[int] | None = None,
              summary: Summary | None = None) -> tuple:
    """Per file, drafter and slot order; a file rewritten in place (other shape or other slot
    norms in its summary) is computed again."""
    s = summary or {}
    content = (s.get("tokens"), s.get("valid_tokens"), s.get("hidden"),
               tuple((slot or {}).get("norm_mean") for slot in s.get("slots") or []))
    return (path, drafter, model, tuple(order) if order is not None else None, content)


async def run_accept(source, path: str, drafter: str, model: str | None,
                     order: list[int] | None = None, ids_from: str | None = None) -> AcceptResult:
    """Source.accept with every failure turned into {"error": one line} (the views show it).
    ids_from: a sample whose ids an id-less `path` borrows (the compare view's A, for B)."""
    try:
        result: AcceptResult = await source.accept(path, drafter, model=model, order=order,
                                                   **({"ids_from": ids_from} if ids_from else {}))
        return result
    except SourceError as err:
        why = str(err)
    except NotImplementedError:
        why = "this source cannot run a drafter"
    except Exception as err:  # noqa: BLE001 - shown in the view; the app keeps running
        why = f"{type(err).__name__}: {err}"
    return {"path": path, "drafter": drafter, "error": why}  # as error_result makes it


def decode_guesses(result: AcceptResult, analysis: Analysis, target: Target | None,
                   source: Source) -> Shown:
    """The drafter's guesses as text, decoded with the tokenizer the sample's text is read with
    (--tokenizer, or --model's folder): local data here, remote data with a tokenizer here too.
    CPU work: call it in a thread."""
    if target is None or "error" in result or not result.get("per_token"):
        return result
    choice = analysis.tokenizer_choice()
    if choice.decodes_here(target):
        return choice.finish(result, target)
    if getattr(source, "host", None) is None:
        decoded = with_token_text(result, choice.on_source(target))
        decoded.pop("text_error", None)  # the sample's own text line says what is wrong with it
        return decoded
    return result


class SampleAcceptance:
    """The main screen's acceptance cache: results per cache_key, newest files kept."""

    LIMIT = 256

    def __init__(self) -> None:
        self.results: dict[tuple, Shown] = {}

    def get(self, key: tuple) -> Shown | None:
        return self.results.get(key)

    def put(self, key: tuple, result: Shown) -> None:
        if len(self.results) >= self.LIMIT:
            self.results.pop(next(iter(self.results)))
        self.results[key] = result


# ------------------------------------------------------------------------------ formatting


def figures(r: Shown) -> str:
    """'top-1 71.2% · τ 2.31 vs data's ids' for a result: the figures and what they were scored against."""
    said = targets(r, short=True)
    return f"top-1 {pct(r.get('top1'))} · τ {tau(r.get('tau'))}" + (f" {said}" if said else "")


def other_figures(r: Shown) -> str | None:
    """'71.6% · τ 2.21 vs data's ids': the same drafts against the data's ids, when the figures are the model's."""
    ids = r.get("against_ids")
    return None if not ids else f"{pct(ids.get('top1'))} · τ {tau(ids.get('tau'))} {SHORT['ids']}"


def error_line(r: Shown) -> str:
    return printable(str(r.get("error")), message=True).splitlines()[0] if r.get("error") else ""


def header_line(out: Text, acc: Shown | None, style: Callable[[str], Style], width: int) -> None:
    """The sample header's drafter line (nothing at all without --drafter: acc is None), broken
    between its parts where the panel is narrow."""
    if acc is None:
        return
    if acc.get("running"):
        parts = [("⟳ running on this sample…", style("sample--loading"))]
    elif acc.get("error"):
        parts = [("✗ " + error_line(acc), style("sample--warn"))]
    else:
        parts = [(figures(acc), style("sample--ok"))]
        if (other := other_figures(acc)) is not None:
            parts.append((other, style("sample--ok")))
        steps = acc.get("steps") or []
        if len(steps) > 1:
            parts.append(("per step " + " ".join(pct(s) for s in steps), style("sample--dim")))
        parts.append((f"{acc.get('rows')} rows", style("sample--dim")))
        if (shape := (acc.get("drafter_info") or {}).get("shape")):
            parts.append((str(shape), style("sample--dim")))
    label = "drafter "
    out.append(label, style("sample--label"))
    append_parts(out, parts, width - len(label), style("sample--dim"))


def miss_bins(acc: Shown | None, ranges: list[tuple[int, int]]) -> list[float | None]:
    """Per strip column: the share of the rows the drafter scored there that it missed (0: all
    hit), None where it scored none."""
    scored = [0] * len(ranges)
    missed = [0] * len(ranges)
    if acc and acc.get("per_token") and ranges:
        starts = [a for a, _b in ranges]
        for t in acc["per_token"]:
            i = bisect.bisect_right(starts, t["row"]) - 1
            if 0 <= i < len(ranges) and ranges[i][0] <= t["row"] < ranges[i][1]:
                scored[i] += 1
                missed[i] += not t["hit"]
    return [m / n if n else None for m, n in zip(missed, scored, strict=False)]


MISS_LEVELS = "▁▂▃▄▅▆▇█"


def draft_strip(out: Text, acc: Shown | None, ranges: list[tuple[int, int]], cursor_bin: int,
                label_w: int, style: Callable[[str], Style]) -> None:
    """The `draft` row under the norm strips: ━ where the drafter hit every scored row, a red
    bar as tall as the share it missed, blank where it scored nothing."""
    if not acc or acc.get("running") or acc.get("error"):
        return
    out.append("draft".ljust(label_w) + " ", style("sample--label"))
    cursor = style("sample--cursor")
    for i, share in enumerate(miss_bins(acc, ranges)):
        if share is None:
            ch, st = " ", "sample--dim"
        elif share == 0:
            ch, st = "━", "sample--ok"
        else:
            ch, st = MISS_LEVELS[min(len(MISS_LEVELS) - 1, int(share * len(MISS_LEVELS)))], "sample--bad"
        out.append(ch, style(st) + (cursor if i == cursor_bin else Style()))
    out.append(" ")
    out.append("━", style("sample--ok"))
    out.append("hit ", style("sample--dim"))
    out.append("▄█", style("sample--bad"))
    out.append("missed\n", style("sample--dim"))


def token_note(acc: Shown | None, row: int) -> str | None:
    """'drafter guesses token 50: "the" p 0.81 hit' for the token under the cursor, when the
    drafter scored it (the guess's text when a tokenizer decoded it, else its id)."""
    if not acc or not acc.get("per_token"):
        return None
    for t in acc["per_token"]:
        if t["row"] == row:
            draft = f'"{t["draft_text"]}"' if t.get("draft_text") is not None else f"id {t['draft']}"
            return (f"drafter guesses token {row + 2}: {printable(draft)} p {t['p']:.2f} "
                    f"{'hit' if t['hit'] else 'miss'}")
    return None


# ------------------------------------------------------------------------------ compare view


def reorder_from(comparison: ComparisonResult | None) -> list[int] | None:
    """The order to feed B's slots to fc so they line up with A's, when the comparison found B's
    slots in another order (slot_permutation, or a mapping that moves slots); else None.

    mapping[j] is the A slot that B slot j holds; fc position i wants the B slot holding A slot i.
    Positions no B slot matched take the unmatched B slots in their own order."""
    mapping = None
    for f in (comparison or {}).get("findings") or []:
        details: Mapping[str, Any] = f  # a finding's details depend on its code
        if details.get("code") == "slot_permutation" and details.get("mapping"):
            mapping = details["mapping"]
            break
    if mapping is None:
        return None
    k = len(mapping)
    order: list[int | None] = [None] * k
    for j, i in enumerate(mapping):
        if i is not None and 0 <= i < k and order[i] is None:
            order[i] = j
    rest = iter(j for j in range(k) if j not in order)
    full = [j if j is not None else next(rest) for j in order]
    return None if full == list(range(k)) else full


class CompareAcceptance(Widget):
    """The compare view's first line with --drafter: acceptance of A, of B, of B re-ordered.
    (Not a ComparePanel: the sample view imports this module, and the compare panels are
    imported on first use only.)"""

    COMPONENT_CLASSES = {"cmp--head", "cmp--dim", "cmp--side-a", "cmp--side-b", "cmp--error"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.a: Shown | None = None
        self.b: Shown | None = None
        self.order: list[int] | None = None
        self.fixed: Shown | None = None

    def reset(self) -> None:
        self.a = self.b = self.fixed = None
        self.order = None
        self.refresh(layout=True)  # height auto: a note may add a line

    def cancelled(self) -> None:
        """Runs still pending say so instead of spinning."""
        for side in ("a", "b", "fixed"):
            if (getattr(self, side) or {}).get("running"):
                setattr(self, side, {"error": "cancelled (r runs again)"})
        self.refresh(layout=True)  # height auto: a note may add a line

    def set(self, side: str, result: Shown | None, order: list[int] | None = None) -> None:
        if side == "fixed":
            self.order = order
        setattr(self, side, result)
        self.refresh(layout=True)  # height auto: a note may add a line

    def s(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def _part(self, out: Text, r: Shown | None) -> None:
        if r is None:
            out.append("…", self.s("cmp--dim"))
        elif r.get("running"):
            out.append("⟳", self.s("cmp--dim"))
        elif r.get("error"):
            out.append("✗ " + error_line(r), self.s("cmp--error"))
        else:
            out.append(figures(r))

    def render(self) -> Text:
        out = Text()
        out.append("drafter  ", self.s("cmp--head"))
        if self.a and self.b and self.a.get("error") and self.a.get("error") == self.b.get("error"):
            out.append("✗ " + error_line(self.a), self.s("cmp--error"))  # the drafter itself: one line
            return out
        out.append("A ", self.s("cmp--side-a"))
        self._part(out, self.a)
        out.append("  │  ", self.s("cmp--dim"))
        out.append("B ", self.s("cmp--side-b"))
        self._part(out, self.b)
        if self.order is not None:
            out.append("  │  ", self.s("cmp--dim"))
            out.append(f"B re-ordered {','.join(map(str, self.order))} ", self.s("cmp--side-b"))
            self._part(out, self.fixed)
        shape = next(((r.get("drafter_info") or {}).get("shape") for r in (self.a, self.b, self.fixed)
                      if r and (r.get("drafter_info") or {}).get("shape")), None)
        if shape:
            out.append(f"  │  {shape}", self.s("cmp--dim"))
        if self.a and self.b and (why := why_b_differs(self.a, self.b)):
            # the states can match and the figures still differ: say how they were scored
            out.append("\nB is scored otherwise: " + "; ".join(why), self.s("cmp--dim"))
        return out
