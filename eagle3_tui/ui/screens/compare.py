"""The compare view: a training sample (A) against an inference capture (B), token by token.

From the browser: t pins the sample under the cursor as the training side, i chooses the
inference side, c opens this screen (with only A pinned, c takes the file under the cursor as B).
The comparison runs next to the data through the Source's compare() (on the GPU box for an SSH
target), in a worker that escape cancels. This screen owns the view state (which pair, which
token); the widgets only render the comparison dict.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from eagle3_tui.names import printable
from eagle3_tui.sources.base import Source, SourceError
from eagle3_tui.ui.widgets.compare_format import worst_row
from eagle3_tui.ui.widgets.compare_panels import (
    TALL,
    CompareFindings,
    CompareMetrics,
    CompareSides,
    CompareValues,
)
from eagle3_tui.ui.widgets.compare_tokens import TokenTable

if TYPE_CHECKING:
    from eagle3_tui.ui.screens.main import MainScreen


# ----------------------------------------------------------------------------- pins (browser)


@dataclass(frozen=True)
class Pin:
    path: str
    #: "local" or "user@host": the machine the file is on
    where: str

    @property
    def name(self) -> str:
        """The file name, escaped for the terminal (it is only ever shown)."""
        return printable(posixpath.basename(self.path) or self.path)


@dataclass
class ComparePins:
    """The two sides chosen in the browser. Kept on the main screen across compare views."""

    a: Pin | None = None  # training
    b: Pin | None = None  # inference

    def swap(self) -> None:
        self.a, self.b = self.b, self.a

    def across_hosts(self) -> bool:
        return self.a is not None and self.b is not None and self.a.where != self.b.where


class PinsBar(Static):
    """One line above the status line once something is pinned: what A and B are."""

    DEFAULT_CSS = """
    PinsBar { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    PinsBar.-error { color: $text-error; text-style: bold; }
    """


def _pins_text(pins: ComparePins, here: str) -> tuple[Text, bool]:
    if pins.across_hosts():
        assert pins.a is not None and pins.b is not None
        return Text(f"⇄ A {pins.a.name} is on {pins.a.where}, B {pins.b.name} on {pins.b.where}: "
                    "comparing across machines is not supported; pin both on one machine"), True
    out = Text("⇄ compare  ")
    for tag, pin, style, hint in (("A", pins.a, "bold green", "t on a training sample"),
                                  ("B", pins.b, "bold blue", "i on a capture, or c on it")):
        out.append(f"{tag} ", style)
        if pin is None:
            out.append(hint, "italic")
        else:
            out.append(pin.name)
            if pin.where != here:
                out.append(f" on {pin.where}", "bold red")
        out.append("   ")
    if pins.a is not None:
        out.append("c opens the compare view", "dim")
    return out, False


def _update_bar(main: MainScreen) -> None:
    pins: ComparePins = main.pins
    bars = main.query(PinsBar)
    bar = bars.first() if bars else None
    if bar is None:
        if pins.a is None and pins.b is None:
            return
        bar = PinsBar(id="pins")
        main.mount(bar, before=main.query_one("#status"))
    text, error = _pins_text(pins, main.where)
    bar.update(text)
    bar.set_class(error, "-error")


def _file_under_cursor(main: MainScreen) -> str | None:
    entry = main.browser.current
    if entry is not None and entry.kind == "file":
        return posixpath.join(main.path, entry.name)
    return main.shown


def pin_training(main: MainScreen) -> None:
    path = _file_under_cursor(main)
    if path is None:
        main.set_status("put the cursor on a training sample file, then t pins it", error=True)
        return
    main.pins.a = Pin(path, main.where)
    _update_bar(main)
    if main.pins.across_hosts():
        main.set_status("A and B are on different machines: comparing across machines is not supported", error=True)
    elif main.pins.b is None or main.pins.b.path == path:
        main.set_status(f"training side A: {posixpath.basename(path)} · now the inference capture: "
                        "i chooses it, or c compares with the file under the cursor")
    else:
        main.set_status(f"training side A: {posixpath.basename(path)} · c compares it with {main.pins.b.name}")


def choose_inference(main: MainScreen) -> None:
    path = _file_under_cursor(main)
    if path is None:
        main.set_status("put the cursor on an inference capture file, then i chooses it", error=True)
        return
    main.pins.b = Pin(path, main.where)
    _update_bar(main)
    if main.pins.across_hosts():
        main.set_status("A and B are on different machines: comparing across machines is not supported", error=True)
    elif main.pins.a is None:
        main.set_status(f"inference side B: {posixpath.basename(path)} · now pin the training sample with t")
    else:
        main.set_status(f"inference side B: {posixpath.basename(path)} · c compares it with {main.pins.a.name}")


def open_compare(main: MainScreen) -> None:
    pins: ComparePins = main.pins
    if pins.a is None:
        main.set_status("first pin the training sample: t with the cursor on it", error=True)
        return
    if pins.b is None:
        path = _file_under_cursor(main)
        if path is None or path == pins.a.path:
            main.set_status("choose the inference capture: i (or c) with the cursor on it", error=True)
            return
        pins.b = Pin(path, main.where)
        _update_bar(main)
    assert pins.b is not None
    if pins.across_hosts():
        _update_bar(main)
        main.set_status(f"A is on {pins.a.where} and B on {pins.b.where}: comparing across machines is "
                        "not supported; pin both on one machine", error=True)
        return
    if main.source is None or pins.a.where != main.where:
        main.set_status(f"the pinned files are on {pins.a.where}; the browser is on {main.where or 'nothing'} "
                        "now: open that target again to compare them", error=True)
        return
    main.app.push_screen(CompareScreen(main.source, pins, main.where))


# ----------------------------------------------------------------------------- the screen


class ComparisonDone(Message):
    def __init__(self, generation: int, result: dict[str, Any]) -> None:
        super().__init__()
        self.generation = generation
        self.result = result


class CompareScreen(Screen):
    BINDINGS = [
        Binding("escape", "back", "Back", key_display="esc", id="compare.back",
                tooltip="Cancel a running comparison; else back to the browser"),
        Binding("q", "leave", "Back", show=False, id="compare.leave", tooltip="Back to the browser"),
        Binding("w", "worst", "Worst", id="compare.worst",
                tooltip="Jump to the worst token (largest relative error)"),
        Binding("s", "swap", "Swap", id="compare.swap",
                tooltip="Swap training and inference sides and compare again"),
        Binding("v", "toggle_bottom", "Values/metrics", id="compare.toggle",
                tooltip="Short screens: token values or metrics below the tokens"),
        Binding("r", "rerun", "Again", show=False, id="compare.rerun", tooltip="Run the comparison again"),
        Binding("n,p", "browser_only", show=False, id="compare.no_step",
                tooltip="(n/p step through files in the browser, not here)"),
    ]

    DEFAULT_CSS = """
    CompareScreen { layout: vertical; }
    #cmp-findings-box { height: auto; max-height: 35%; scrollbar-size-vertical: 1; }
    #cmp-body { height: 1fr; }
    #cmp-tokens { height: 1fr; min-height: 4; border-top: solid $panel-lighten-2; border-title-color: $text-muted; }
    #cmp-values, #cmp-metrics { border-top: solid $panel-lighten-2; border-title-color: $text-muted; }
    #cmp-status { height: 1; padding: 0 1; color: $text-muted; background: $panel; }
    #cmp-status.-error { color: $text-error; text-style: bold; }
    """

    AUTO_FOCUS = "#cmp-tokens"

    def __init__(self, source: Source, pins: ComparePins, where: str) -> None:
        super().__init__()
        assert pins.a is not None and pins.b is not None
        self.source = source
        self.pins = pins
        self.where = where
        self.a, self.b = pins.a.path, pins.b.path
        self.generation = 0
        self.running = False
        self.result: dict[str, Any] | None = None
        #: short screens show one bottom panel: "metrics" or "values"
        self.bottom = "metrics"

    def compose(self) -> ComposeResult:
        yield CompareSides(self.a, self.b, id="cmp-sides")
        with VerticalScroll(id="cmp-findings-box", can_focus=False):
            yield CompareFindings(id="cmp-findings")
        with Vertical(id="cmp-body"):
            yield TokenTable(id="cmp-tokens")
            yield CompareValues(id="cmp-values")
            yield CompareMetrics(id="cmp-metrics")
        yield Static(id="cmp-status")
        yield Footer(compact=True)

    @property
    def table(self) -> TokenTable:
        return self.query_one(TokenTable)

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
        sides = self.query_one(CompareSides)
        sides.a, sides.b = self.a, self.b
        sides.show(None)
        self.query_one(CompareFindings).show_note(
            f"⟳ comparing {posixpath.basename(self.a)} (A, training) with {posixpath.basename(self.b)} "
            f"(B, inference) on {self.where}…  esc cancels")
        self.table.clear("")
        self.query_one(CompareValues).show(None)
        self.query_one(CompareMetrics).show(None)
        self.query_one("#cmp-body").loading = True
        self.set_status(f"comparing on {self.where}… (esc cancels)")
        self.run_compare(self.a, self.b, self.generation)

    @work(exclusive=True, group="compare")
    async def run_compare(self, a: str, b: str, generation: int) -> None:
        try:
            result = await self.source.compare(a, b)
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
        self.query_one("#cmp-body").loading = False
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
        worst = worst_row(r)
        hint = "j/k move · w worst token · s swap sides · esc back"
        if worst is not None:
            hint = f"worst token: B row {worst[2]['worst_b_row']} (w) · " + hint
        self.set_status(hint)

    def cancel(self) -> None:
        self.workers.cancel_group(self, "compare")
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
        self.set_status(f"worst token: B row {m['worst_b_row']} (A row {m.get('worst_a_row')}), {name}: "
                        f"relative error {m['worst_rel_err']:.3g}")

    def action_swap(self) -> None:
        self.pins.swap()
        self.a, self.b = self.b, self.a
        try:
            from eagle3_tui.ui.screens.main import MainScreen

            main = next(s for s in self.app.screen_stack if isinstance(s, MainScreen))
            _update_bar(main)
        except StopIteration:
            pass
        self.start()
        self.set_status(f"swapped: A (training) is now {posixpath.basename(self.a)} · comparing again…")

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
        self.query_one("#cmp-values").display = tall or self.bottom == "values"
        self.query_one("#cmp-metrics").display = tall or self.bottom == "metrics"

    # ----- events

    def on_token_table_cursor_moved(self, message: TokenTable.CursorMoved) -> None:
        self.query_one(CompareValues).set_index(message.index)

    def set_status(self, text: str, *, error: bool = False) -> None:
        status = self.query_one("#cmp-status", Static)
        status.update(Text(printable(text, message=True)))
        status.set_class(error, "-error")


# ----------------------------------------------------------------------------- palette


def compare_commands(app: Any) -> list[tuple[str, Callable[[], object], str]]:
    """Palette entries: pinning from the browser, and the compare view's own actions when open."""
    from eagle3_tui.ui.screens.main import MainScreen

    stack = list(app.screen_stack)
    main = next((s for s in stack if isinstance(s, MainScreen)), None)
    out: list[tuple[str, Callable[[], object], str]] = []
    view = next((s for s in reversed(stack) if isinstance(s, CompareScreen)), None)
    if view is not None:
        out += [
            ("Compare: jump to the worst token", view.action_worst, "w"),
            ("Compare: swap training and inference sides", view.action_swap, "s"),
            ("Compare: run again", view.action_rerun, "r"),
            ("Compare: back to the browser", view.action_leave, "esc"),
        ]
    elif main is not None:
        out += [
            ("Compare: pin this sample as the training side (A)", lambda: pin_training(main), "t"),
            ("Compare: choose this file as the inference side (B)", lambda: choose_inference(main), "i"),
            ("Compare: open the compare view", lambda: open_compare(main), "c"),
        ]
    return out
