"""The dataset view's serve-check (--model and --drafter): once the layers step has found the
data's boundaries, the drafter's config.json is read as each serving engine reads it
(dataset/serving.py, the rules `eagle3-tui serve-check` applies) and shown as one line per
engine and version range: what it will capture, whether that matches the data, whether it is a
guess, and why; with the config.json line that fixes a mismatch above the table.

The drafter's config.json and the target's are read through the open Source (as the command
reads them), so this works over SSH too; the reading runs in a worker that turns any failure
into a line here. The screen holds the widget and calls `layers_found` and `reset`; the export
reads `export()`.
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from eagle3_tui.dataset import serving
from eagle3_tui.dataset.serving import bset, label, table_rows
from eagle3_tui.dataset.serving_inputs import model_arch, read_config
from eagle3_tui.dataset.shapes import LayersEntry
from eagle3_tui.names import printable
from eagle3_tui.sources.base import Source
from eagle3_tui.ui.shared.messages import StatusMessage

if TYPE_CHECKING:
    from eagle3_tui.dataset.serving import ServingCheck


class ServingTable(VerticalScroll):
    """Scrolls (by wheel) when the table is taller than its share of the screen (80x24)."""

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
        self.body = Static()

    def compose(self) -> ComposeResult:
        yield self.body

    def reset(self) -> None:
        """A new scan: the check of the last one is gone until the layers are found again."""
        self.result, self.error, self.state = None, None, None
        self.workers.cancel_group(self, "serving")
        self.display = False

    def layers_found(self, source: Source, drafter: str | None, model: str | None,
                     entries: list[LayersEntry]) -> None:
        """The layers step ended (its report `entries`): with --drafter and --model, check the
        drafter against them."""
        if drafter is None or model is None or not entries:
            return
        self.drafter, self.state, self.display = drafter, "checking", True
        self.body.update(Text(f"serve-check: reading {printable(drafter)}'s config.json…", style="italic"))
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
            self.body.update(self._render_check())
            if serving.exit_code(self.result):
                self.post_message(StatusMessage(self.verdict(), error=True))
        except Exception as err:  # noqa: BLE001 - said here; the view goes on without the check
            self.result, self.error, self.state = None, str(err) or type(err).__name__, "failed"
            self.body.update(self._render_check())

    def verdict(self) -> str:
        assert self.result is not None
        return serving.verdict(self.result)

    def _render_check(self) -> Group | Text:
        if self.result is None:
            return Text(printable(f"serve-check: {self.error}", message=True),
                        style=self.get_component_rich_style("serving--differs"))
        r = self.result
        L = r["data"]["layers"]
        bad = self.get_component_rich_style("serving--differs")
        head = self.get_component_rich_style("serving--head")
        ok = self.get_component_rich_style("serving--ok")
        lines: list[Any] = [Text(self.verdict(), style=bad if "will not" in self.verdict() else ok)]
        for f in r["findings"]:
            if f["severity"] == "warning" and f["code"] != "serving_mismatch":
                lines.append(Text(printable(f"{f['code']}: {f['message']}", message=True), style=bad,
                                  no_wrap=True, overflow="ellipsis"))
        if r["fix"] is not None:
            for line in r["fix"]["lines"] or [r["fix"]["message"]]:
                lines.append(Text(printable(f"fix: {line}", message=True),
                                  style=self.get_component_rich_style("serving--fix")))
        table = Table(box=None, padding=(0, 1), pad_edge=False, expand=True, header_style=head)
        columns: list[tuple[str, dict[str, Any]]] = [("engine", {}), ("captures", {}), ("matches", {}), ("guessed", {}),
                                                     ("why", {"ratio": 1, "overflow": "ellipsis"})]
        for name, kw in columns:
            table.add_column(name, no_wrap=True, **kw)
        for e in r["engines"]:
            current = e["until"] is None
            style = bad if not e["matches"] and current and e["serves"] else (
                "" if current else self.get_component_rich_style("serving--old"))
            table.add_row(label(e), "b " + bset(e["boundaries"], L), "yes" if e["matches"] else "NO",
                          "guessed" if e["guessed"] else "", printable(e["why"], message=True), style=style)
        return Group(*lines, table)

    def export(self) -> dict[str, Any] | None:
        """The report's "serving": the check (as `serve-check --json`), why it failed, or None."""
        if self.state is None or self.state == "checking":
            return None
        if self.result is None:
            return {"drafter_path": self.drafter, "error": self.error}
        # "table": serve-check's text columns (verdict, engine and versions, what it captures, why)
        return {"drafter_path": self.drafter, **self.result, "table": [list(row) for row in table_rows(self.result)]}
