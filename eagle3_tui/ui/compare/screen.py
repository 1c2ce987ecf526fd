"""The compare view: a training sample (A) against an inference capture (B), token by token.

The main screen opens it with the two files pinned in the browser (ui/browser/pins.py); s swaps the
sides here and posts PinsSwapped, so the browser's pins follow without this screen knowing it.
The comparison runs next to the data through the Source's compare() (on the GPU box for an SSH
target), in a worker that escape cancels. This screen owns the view state (which pair, which
token); the widgets only render the comparison dict.
"""

from __future__ import annotations

import asyncio
import posixpath
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen

from eagle3_tui.engines.results.compare import ComparisonResult
from eagle3_tui.sources.base import Source, SourceError
from eagle3_tui.sources.tokenizer import TokenizerChoice
from eagle3_tui.target import Target
from eagle3_tui.ui import keys
from eagle3_tui.ui.compare.exporting import CompareExporter
from eagle3_tui.ui.compare.format import text_error, worst_row
from eagle3_tui.ui.compare.messages import PinsSwapped
from eagle3_tui.ui.compare.panels import (
    TALL,
    CompareFindings,
    CompareMetrics,
    CompareSides,
    CompareValues,
)
from eagle3_tui.ui.compare.tokens import AlignedTokenTable, massive_legend, token_texts
from eagle3_tui.ui.shared import acceptance
from eagle3_tui.ui.shared.status import KeysFooter, StatusLine


class ComparisonDone(Message):
    def __init__(self, generation: int, result: ComparisonResult) -> None:
        super().__init__()
        self.generation = generation
        self.result = result


class CompareScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [*keys.COMPARE]

    AUTO_FOCUS = "#cmp-tokens"

    def __init__(self, source: Source, a: str, b: str, where: str, *, drafter: str | None = None,
                 model: str | None = None, tokenizer: TokenizerChoice | None = None,
                 data: Target | None = None, roles: tuple[str, str] = ("training", "inference")) -> None:
        """roles: what A and B are (the browser's pins say; the other way round after a swap)."""
        super().__init__()
        #: --drafter on the data's machine: acceptance of A, B, B re-ordered
        self.drafter = drafter
        self.source = source
        #: the target model's folder on the data's machine (--model): both sides are identified
        self.model = model
        #: --tokenizer (or --model's folder), on the data's machine or here: token text on both sides
        self.tokenizer = tokenizer
        #: where A and B are (the machine the tokenizer is read for)
        self.data = data
        self.where = where
        self.a, self.b = a, b
        self.roles = roles
        self.generation = 0
        self.running = False
        self.result: ComparisonResult | None = None
        #: short screens show one bottom panel: "metrics" or "values"
        self.bottom = "metrics"
        self.exporter = CompareExporter(self)  # e, y

    def compose(self) -> ComposeResult:
        if self.drafter is not None:
            yield acceptance.CompareAcceptance(id="cmp-accept")
        yield CompareSides(self.a, self.b, id="cmp-sides")
        with VerticalScroll(id="cmp-findings-box", can_focus=False):
            yield CompareFindings(id="cmp-findings")
        with Vertical(id="cmp-body"):
            yield AlignedTokenTable(id="cmp-tokens")
            yield CompareValues(id="cmp-values")
            yield CompareMetrics(id="cmp-metrics")
        yield StatusLine(id="cmp-status")
        yield KeysFooter(compact=True)

    @property
    def table(self) -> AlignedTokenTable:
        return self.query_one(AlignedTokenTable)

    def on_mount(self) -> None:
        self.query_one("#cmp-values").border_title = "token under the cursor"
        self.query_one("#cmp-metrics").border_title = "per slot, and every B slot against every A slot"
        self._layout_bottom()
        self.start()

    def on_resize(self) -> None:
        self._layout_bottom()

    # ----- running the comparison

    def start(self) -> None:
        self.generation += 1
        self.running = True
        self.result = None
        self.remove_class("-compared")  # app.tcss: the findings take the room until rows come
        sides = self.query_one(CompareSides)
        sides.a, sides.b, sides.roles = self.a, self.b, self.roles
        sides.show(None)
        self.query_one(CompareFindings).show_note(
            f"⟳ comparing {posixpath.basename(self.a)} (A, {self.roles[0]}) with {posixpath.basename(self.b)} "
            f"(B, {self.roles[1]}) on {self.where}"
            + (f", identifying both with {posixpath.basename(self.model.rstrip('/'))}" if self.model else "")
            + "…  esc cancels")
        self.table.clear("")
        self.query_one(CompareValues).show(None)
        self.query_one(CompareMetrics).show(None)
        self.query_one("#cmp-body").loading = True
        self.set_status(f"comparing on {self.where}… (esc cancels)")
        self.run_compare(self.a, self.b, self.generation)
        if self.drafter is not None:
            self.query_one(acceptance.CompareAcceptance).reset()
            self.run_acceptance(self.generation)

    @work(exclusive=True, group="compare")
    async def run_compare(self, a: str, b: str, generation: int) -> None:
        result: ComparisonResult
        try:
            choice, data = self.tokenizer, self.data
            on_source = choice.on_source(data) if choice is not None else None
            result = await self.source.compare(a, b, tokenizer=on_source, model=self.model or None)
            if choice is not None and data is not None:
                # a tokenizer here and the data on a box: the ids came back, decode them here
                result = await asyncio.to_thread(choice.finish, result, data)
        except SourceError as err:
            result = {"a": {"path": a}, "b": {"path": b}, "error": str(err)}
        except Exception as err:  # noqa: BLE001 - shown in the pane; the app keeps running
            result = {"a": {"path": a}, "b": {"path": b}, "error": f"{type(err).__name__}: {err}"}
        self.post_message(ComparisonDone(generation, result))

    def on_comparison_done(self, message: ComparisonDone) -> None:
        if message.generation != self.generation:
            return  # a run that was replaced (swap, again) or cancelled
        self.running = False
        self.result = r = message.result
        order = acceptance.reorder_from(r) if self.drafter is not None else None
        if order is not None:
            self.query_one(acceptance.CompareAcceptance).set("fixed", acceptance.RUNNING, order)
            self.run_reordered(self.generation, order)
        self.query_one("#cmp-body").loading = False
        self.set_class("error" not in r, "-compared")
        self.query_one(CompareSides).show(r)
        self.query_one(CompareFindings).show(r)
        self.query_one(CompareMetrics).show(r)
        self.query_one(CompareValues).show(r)
        self.table.show(r)
        if "error" in r:
            self.table.clear("Nothing to compare: see above.")
            self.set_status("the comparison could not run: " + str(r["error"]), error=True)
            return
        al = r.get("alignment") or {}
        self.table.border_title = f"aligned tokens · {al.get('length', 0)} rows"
        massive = massive_legend(r)
        if massive:  # what the ▲ rows are, where the rows are drawn
            self.table.border_title += f" · {massive}"
        worst = worst_row(r)
        hint = "j/k move · w worst token · s swap sides · esc back"
        if worst is not None:
            hint = f"worst token: B row {worst[2]['worst_b_row']}{token_texts(r, worst[0])} (w) · " + hint
        if why := text_error(r):  # the numbers are shown; say why the text is not
            self.set_status("no token text: " + why, error=True)
            return
        self.set_status(hint)

    # ----- the drafter on A, on B, and on B with its slots in A's order (--drafter)

    @work(exclusive=True, group="accept")
    async def run_acceptance(self, generation: int) -> None:
        drafter = self.drafter
        if drafter is None:
            return
        for side, path in (("a", self.a), ("b", self.b)):
            self.query_one(acceptance.CompareAcceptance).set(side, acceptance.RUNNING)
            # B without token ids borrows A's, aligned as the comparison aligns them
            result = await acceptance.run_accept(self.source, path, drafter, self.model,
                                                 ids_from=self.a if side == "b" else None)
            if generation != self.generation:
                return
            self.query_one(acceptance.CompareAcceptance).set(side, result)

    @work(exclusive=True, group="accept-reordered")
    async def run_reordered(self, generation: int, order: list[int]) -> None:
        if self.drafter is None:
            return
        result = await acceptance.run_accept(self.source, self.b, self.drafter, self.model, order, ids_from=self.a)
        if generation == self.generation:
            self.query_one(acceptance.CompareAcceptance).set("fixed", result, order)

    def cancel(self) -> None:
        self.workers.cancel_group(self, "accept")
        self.workers.cancel_group(self, "accept-reordered")
        self.workers.cancel_group(self, "compare")
        if self.drafter is not None:
            self.query_one(acceptance.CompareAcceptance).cancelled()
        self.generation += 1  # a result that still arrives is dropped
        self.running = False
        self.query_one("#cmp-body").loading = False
        self.query_one(CompareFindings).show_note("comparison cancelled · r runs it again · esc back", "cmp--warning")
        self.set_status("cancelled")

    # ----- actions

    def action_back(self) -> None:
        if self.running:
            self.cancel()
        else:
            self.app.pop_screen()

    def action_leave(self) -> None:
        if self.running:
            self.cancel()
        self.app.pop_screen()

    def action_worst(self) -> None:
        worst = worst_row(self.result or {})
        if worst is None:
            self.set_status("no measured token to jump to", error=True)
            return
        index, label, m = worst
        self.table.move_to(index)
        name = "final" if label == "f" else f"slot {label}"
        self.set_status(f"worst token: B row {m['worst_b_row']} (A row {m.get('worst_a_row')})"
                        f"{token_texts(self.result or {}, index)}, {name}: "
                        f"relative error {m['worst_rel_err']:.3g}")

    def action_swap(self) -> None:
        self.a, self.b = self.b, self.a
        self.roles = (self.roles[1], self.roles[0])
        self.post_message(PinsSwapped(self.a, self.b))  # the browser's pins follow
        self.start()
        self.set_status(f"swapped: A ({self.roles[0]}) is now {posixpath.basename(self.a)} · comparing again…")

    def action_export(self) -> None:
        self.exporter.export()

    def action_copy_report(self) -> None:
        self.exporter.copy()

    def acceptance_results(self) -> dict[str, acceptance.Shown | None]:
        """The drafter's results shown on A, B and B re-ordered (--drafter)."""
        line = self.query_one(acceptance.CompareAcceptance)
        return {"a": line.a, "b": line.b, "fixed": line.fixed}

    def action_browser_only(self) -> None:
        self.set_status("n/p step through the browser's files: esc goes back to it")

    def action_rerun(self) -> None:
        self.start()

    def action_toggle_bottom(self) -> None:
        self.bottom = "values" if self.bottom == "metrics" else "metrics"
        self._layout_bottom()
        if self.size.height >= TALL:
            self.set_status("the screen is tall enough to show both")

    def _layout_bottom(self) -> None:
        tall = (self.size.height or self.app.size.height) >= TALL
        self.set_class(not tall, "-short")  # app.tcss: the token table keeps its rows, the panels give
        self.query_one("#cmp-values").display = tall or self.bottom == "values"
        self.query_one("#cmp-metrics").display = tall or self.bottom == "metrics"

    # ----- events

    def on_aligned_token_table_cursor_moved(self, message: AlignedTokenTable.CursorMoved) -> None:
        self.query_one(CompareValues).set_index(message.index)

    def set_status(self, text: str, *, error: bool = False) -> None:
        self.query_one(StatusLine).say(text, error=error)
