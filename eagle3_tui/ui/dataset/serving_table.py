"""The dataset view's serve-check (--model and --drafter): once the layers step has found the
data's boundaries, the drafter's config.json is read as each serving engine reads it
(dataset/serving.py, the rules `eagle3-tui serve-check` applies) and shown as one line per
engine and version range (the verdict first, what it will capture, why), under the verdict, the
config.json lines that fix a mismatch and the first findings, as `serve-check` prints them. The rows
are a table of their own: tab reaches it (the screen's tab cycles the files, the findings and
this), the arrows move through every row, and the row under the cursor shows its whole reason below.

The drafter's config.json and the target's are read through the open Source (as the command
reads them), so this works over SSH too; the reading runs in a worker that turns any failure
into a line here. The screen holds the widget and calls `layers_found` and `reset`; the export
reads `export()`.
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.events import DescendantBlur, DescendantFocus, Resize
from textual.widgets import DataTable, Static

from eagle3_tui.dataset import serving
from eagle3_tui.dataset.serving import bset, label, table_rows
from eagle3_tui.dataset.serving_inputs import model_arch, read_config
from eagle3_tui.dataset.shapes import LayersEntry
from eagle3_tui.names import printable
from eagle3_tui.sources.base import Source
from eagle3_tui.ui import keys
from eagle3_tui.ui.dataset.layout import is_short
from eagle3_tui.ui.shared.messages import StatusMessage

if TYPE_CHECKING:
    from eagle3_tui.dataset.serving import ServingCheck

#: lines of other findings shown above the rows (the rest: `e` exports them)
HEAD_FINDINGS = 1
#: the files' table keeps at least this many lines (its min-height in app.tcss)
MIN_FILES = 4


class ServingRows(DataTable):
    """One row per engine and version range: reached with tab, moved through with the arrows
    (j/k too); the row under the cursor shows its whole `why` below the table."""

    BINDINGS = [Binding("j", "cursor_down", show=False), Binding("k", "cursor_up", show=False)]


class ServingTable(Vertical):
    """The verdict, the fix and the findings above, the rows in their own scrolling table: a few
    rows while the focus is elsewhere, half the screen while it is in the table (80x24 fits).
    v in the rows runs the installed vLLM live (dataset/serving_live.py) and shows what it feeds
    the drafter under the verdict."""

    BINDINGS: ClassVar[list[BindingType]] = [*keys.SERVING]

    COMPONENT_CLASSES = {"serving--head", "serving--differs", "serving--old", "serving--fix", "serving--ok"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: dataset/serving.check's answer, or why there is none (the drafter given: a folder)
        self.result: ServingCheck | None = None
        self.error: str | None = None
        self.drafter: str | None = None
        #: "checking", "done", "failed"; None: not run since the last scan began
        self.state: str | None = None
        self.display = False
        #: the live run's report (serve-check --live's), "running", or None
        self.live: dict[str, Any] | str | None = None
        self.source: Source | None = None
        self.model: str | None = None
        self.root: str | None = None
        self.head = Static(id="serving-head")
        self.rows = ServingRows(id="serving-rows", cursor_type="row", zebra_stripes=False, show_cursor=True)
        self.detail = Static(id="serving-detail")

    def compose(self) -> ComposeResult:
        yield self.head
        yield self.rows
        yield self.detail

    def on_mount(self) -> None:
        self.rows.display = False
        self.detail.display = False

    def reset(self) -> None:
        """A new scan: the check of the last one is gone until the layers are found again."""
        self.result, self.error, self.state, self.live = None, None, None, None
        self.workers.cancel_group(self, "serving")
        self.workers.cancel_group(self, "serving-live")
        self.display = False

    def layers_found(self, source: Source, drafter: str | None, model: str | None,
                     entries: list[LayersEntry], root: str | None = None) -> None:
        """The layers step ended (its report `entries`): with --drafter and --model, check the
        drafter against them. root: the dataset's folder (v runs the engine on its prompts)."""
        if drafter is None or model is None or not entries:
            return
        self.root = root
        self.drafter, self.state, self.display = drafter, "checking", True
        self.source, self.model = source, model
        self.head.update(Text(f"serve-check: reading {printable(drafter)}'s config.json…", style="italic"))
        self.rows.display = self.detail.display = False
        self.check(source, drafter, model, list(entries))

    @work(exclusive=True, group="serving")
    async def check(self, source: Source, drafter: str, model: str, entries: list[LayersEntry]) -> None:
        try:
            join = posixpath.join if source.host is not None else os.path.join
            config = await read_config(source, drafter, join)
            arch = await model_arch(source, join(model, "config.json"))
            data = serving.data_from_layers(entries)
            if data is None:
                raise ValueError("the dataset's boundaries are unknown: no file of the majority was identified")
            self.result, self.error, self.state = serving.check(config, data, arch), None, "done"
            self._show()
            if serving.exit_code(self.result):
                self.post_message(StatusMessage(self.verdict(), error=True))
        except Exception as err:  # noqa: BLE001 - said here; the view goes on without the check
            self.result, self.error, self.state = None, str(err) or type(err).__name__, "failed"
            self._show()

    def action_live(self) -> None:
        """v: the installed engine run on the dataset's first training prompt with the drafter,
        where the data is (here, or on the box by its agent)."""
        if self.source is None or self.drafter is None or self.model is None or self.root is None \
                or self.live == "running":
            return
        self.live = "running"
        self.post_message(StatusMessage("vLLM live: starting the engine with the drafter (a minute on a CPU)…"))
        self.run_live(self.source, self.root, self.model, self.drafter)

    @work(exclusive=True, group="serving-live")
    async def run_live(self, source: Source, root: str, model: str, drafter: str) -> None:
        # lazy: the live text only when asked
        from eagle3_tui.dataset.serving_live import format_live

        analysis = getattr(self.app, "analysis", None)

        def progress(text: str) -> None:
            self.post_message(StatusMessage(f"vLLM live: {text}"))

        try:
            report: dict[str, Any] = dict(await source.serve_live(
                root, model=model, drafter=drafter, engine="vllm", python=getattr(analysis, "engine_python", None),
                progress=progress))
        except Exception as err:  # noqa: BLE001 - said here; the view goes on
            report = {"engine": "vllm", "error": str(err) or type(err).__name__}
        self._live_done(report, format_live(report))

    def _live_done(self, report: dict[str, Any], text: str) -> None:
        self.live = report
        self.post_message(StatusMessage(text.splitlines()[0], error="error" in report or not report.get("match")))
        self._show()

    def verdict(self) -> str:
        assert self.result is not None
        return serving.verdict(self.result)

    # ----- drawing

    def _show(self) -> None:
        if self.result is None:
            self.head.update(Text(printable(f"serve-check: {self.error}", message=True),
                                  style=self.get_component_rich_style("serving--differs")))
            self.rows.display = self.detail.display = False
            return
        self.head.update(self._head())
        self._fill()
        # the cursor starts on the first current engine that will not serve (else the first
        # current one): the row that matters is in view before any key is pressed
        engines = self.result["engines"]
        start = next((i for i, e in enumerate(engines) if e["until"] is None and e["serves"] and not e["matches"]),
                     next((i for i, e in enumerate(engines) if e["until"] is None), 0))
        self.rows.move_cursor(row=start, animate=False)
        self.rows.display = True
        self.detail.display = self.rows.has_focus
        self.call_after_refresh(self._fit)
        self._describe(self.rows.cursor_row)

    def _head(self, verdict_only: bool = False) -> Text:
        r = self.result
        assert r is not None
        bad = self.get_component_rich_style("serving--differs")
        ok = self.get_component_rich_style("serving--ok")
        verdict = self.verdict()
        out = Text(verdict, style=bad if serving.exit_code(r) else ok, no_wrap=True, overflow="ellipsis")
        if verdict_only:
            return out
        if r["fix"] is not None:
            for line in r["fix"]["lines"] or [r["fix"]["message"]]:
                out.append("\n" + printable(f"fix: {line}", message=True), style=self.get_component_rich_style("serving--fix"))
        shown = [f for f in r["findings"] if f["severity"] in ("error", "warning")
                 and f["code"] not in ("serving_mismatch", "serving_fails", "serving_guessed")]
        for f in shown[:HEAD_FINDINGS]:
            out.append("\n" + printable(f"{f['code']}: {f['message']}", message=True), style=bad)
        if len(shown) > HEAD_FINDINGS:
            out.append(f"\n… {len(shown) - HEAD_FINDINGS} more finding(s): e exports them all", style="italic")
        if isinstance(self.live, dict):
            from eagle3_tui.dataset.serving_live import format_live

            first = format_live(self.live).splitlines()[0]
            out.append("\n" + first, style=ok if self.live.get("match") else bad)
        out.no_wrap, out.overflow = True, "ellipsis"
        return out

    def _fill(self) -> None:
        r = self.result
        assert r is not None
        bad = self.get_component_rich_style("serving--differs")
        old = self.get_component_rich_style("serving--old")
        table = self.rows
        table.clear(columns=True)
        for name in ("verdict", "engine and versions", "captures", "why"):
            table.add_column(name, key=name)
        for (mark, name, got, why), e in zip(table_rows(r), r["engines"], strict=False):
            current = e["until"] is None
            style = bad if not e["matches"] and current and e["serves"] else ("" if current else old)
            table.add_row(*(Text(cell, style=style, no_wrap=True) for cell in (mark, name, got, why)))

    def _fit(self) -> None:
        """The rows' height: what the screen leaves once the other panes have theirs (the files'
        table at its minimum), a few rows while the focus is elsewhere. In the rows, the head
        shrinks to the verdict and the row's reason shows below, so 80x24 keeps every pane. On a
        short screen (ui/dataset/layout.py) it is the other way round: the verdict and two rows
        until tab reaches the rows, then the fix too (the files' table gives its rows)."""
        if self.result is None or not self.is_attached:
            return
        focused, short = self.rows.has_focus, is_short(self.screen)
        head = self._head(verdict_only=focused != short)
        if short and not focused and self.result["fix"] is not None:
            head.append("  (tab: the fix)", style="italic")
        self.head.update(head)
        screen_h = self.screen.size.height
        # the files' table (the screen's 1fr pane) counts at its minimum; by name: a sibling's
        # class is not imported here
        others = sum(c.outer_size.height for c in self.screen.children
                     if c is not self and c.display and type(c).__name__ != "DatasetTable")
        head_h = (_lines(head, self.head.size.width or screen_h) if short else 1) if focused \
            else self.head.outer_size.height
        left = screen_h - others - MIN_FILES - 1 - head_h - ((2 if short else 3) if focused else 0)  # the detail
        want = self.rows.row_count + 1
        cap = want if focused else 3 if short else max(3, screen_h // 6)
        self.rows.styles.height = max(3, min(want, cap, left))
        # once the new height is laid out, the cursor's row is scrolled into it
        self.call_after_refresh(self._cursor_in_view)

    def _cursor_in_view(self) -> None:
        self.rows.move_cursor(row=self.rows.cursor_row, animate=False)  # where the cursor is by then

    def _describe(self, index: int) -> None:
        r = self.result
        if r is None or not 0 <= index < len(r["engines"]):
            self.detail.update("")
            return
        e = r["engines"][index]
        L = r["data"]["layers"]
        text = f"{label(e)}: b {bset(e['boundaries'], L)} — {e['why']}"
        if e.get("fails"):
            text += f"; fails: {e['fails']}"
        if e.get("depends"):
            text += f"; depends on {e['depends']}"
        self.detail.update(Text(printable(text, message=True)))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._describe(event.cursor_row)

    def on_descendant_focus(self, event: DescendantFocus) -> None:
        self.detail.display = self.result is not None
        self.call_after_refresh(self._fit)

    def on_descendant_blur(self, event: DescendantBlur) -> None:
        self.detail.display = False
        self.call_after_refresh(self._fit)

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self._fit)

    def export(self) -> dict[str, Any] | None:
        """The report's "serving": the check (as `serve-check --json`), why it failed, or None."""
        if self.state is None or self.state == "checking":
            return None
        if self.result is None:
            return {"drafter_path": self.drafter, "error": self.error}
        # "table": serve-check's text columns (verdict, engine and versions, what it captures, why)
        return {"drafter_path": self.drafter, **self.result, "table": [list(row) for row in table_rows(self.result)],
                **({"live": self.live} if isinstance(self.live, dict) else {})}


def _lines(text: Text, width: int) -> int:
    """The lines `text` takes wrapped at `width` (it is laid out only after the rows' height is set)."""
    return sum(max(1, -(-len(line) // max(1, width))) for line in text.plain.splitlines())
