"""What the main screen adds to a sample with the TUI's --drafter and --model: the drafter's
acceptance on the sample shown (ui/widgets/acceptance.py), and `I`, which identifies the boundary
of the target model each slot holds (samples/identify.py, run by the Source next to the data).

A part of MainScreen (a mixin): the state it reads (source, target, shown sample, caches) lives
on the screen; its workers post messages the screen handles here.
"""

from __future__ import annotations

import posixpath
from typing import Any

from textual import work
from textual.message import Message

from eagle3_tui.names import printable
from eagle3_tui.sources.base import SourceError
from eagle3_tui.ui.widgets import acceptance


class Identified(Message):
    """The identification of one file (I) came back: the Source's identify result."""

    def __init__(self, path: str, result: dict[str, Any]) -> None:
        super().__init__()
        self.path = path
        self.result = result


class SampleAnalysis:
    """MainScreen's acceptance and identification of the sample shown."""

    def _start_acceptance(self, path: str, summary: dict[str, Any]) -> None:
        analysis = self.app.analysis
        drafter = analysis.path_for("drafter", self.target) if self.target is not None else None
        if drafter is None or summary.get("error") or self.source is None:
            return
        model = analysis.path_for("model", self.target)
        key = acceptance.cache_key(path, drafter, model, summary=summary)
        cached = self.acceptance.get(key)
        self.sample.show_acceptance(cached or acceptance.RUNNING)
        if cached is None:
            self.run_acceptance(key)

    @work(exclusive=True, group="accept")
    async def run_acceptance(self, key: tuple) -> None:
        assert self.source is not None
        path, drafter, model = key[:3]
        self.post_message(acceptance.AcceptanceLoaded(key, await acceptance.run_accept(
            self.source, path, drafter, model)))

    def on_acceptance_loaded(self, message: acceptance.AcceptanceLoaded) -> None:
        self.acceptance.put(message.key, message.result)
        if message.key[0] == self.shown:
            self.sample.show_acceptance(message.result)

    def action_identify(self) -> None:
        path = self.shown
        if self.identifying is not None:
            self._cancel_identify()
            return
        given = self.app.analysis.model
        if not given:
            self.set_status("no target model: start eagle3-tui with --model DIR (on the data's machine)",
                            error=True)
            return
        model = self.app.analysis.path_for("model", self.target) if self.target is not None else None
        if model is None:
            self.set_status(f"--model {printable(given)} is on another machine than the data: "
                            "the model runs next to the data", error=True)
            return
        if path is None or self.source is None or self.sample.summary is None or "error" in self.sample.summary:
            self.set_status("I identifies the sample shown: move onto a sample file first", error=True)
            return
        if path in self.identified:
            self.set_status(f"{printable(posixpath.basename(path))}: identified already (r reloads the file)")
            return
        self.identifying = path
        self.query_one("#sample-pane").border_subtitle = "⟳ identifying…"
        self.set_status(f"⟳ identifying {printable(posixpath.basename(path))}: running "
                        f"{printable(posixpath.basename(model.rstrip('/')))} on {self.where}… (esc cancels)")
        self.run_identify(path, model)

    @work(exclusive=True, group="identify")
    async def run_identify(self, path: str, model: str) -> None:
        assert self.source is not None
        try:
            result = await self.source.identify(path, model=model)
        except SourceError as err:
            result = {"path": path, "model": model, "error": str(err)}
        except Exception as err:  # noqa: BLE001 - the status line shows it; the app keeps running
            result = {"path": path, "model": model, "error": f"{type(err).__name__}: {err}"}
        self.post_message(Identified(path, result))

    def on_identified(self, message: Identified) -> None:
        if message.path != self.identifying:
            return  # cancelled meanwhile
        self.identifying = None
        self.query_one("#sample-pane").border_subtitle = ""
        from eagle3_tui.samples.identify import attach, brief

        got = brief(message.result)
        name = printable(posixpath.basename(message.path))
        if "error" in got:
            text = f"{name}: not identified: {printable(str(got['error']), message=True)}"
            self.set_status(text, error=True)
            # the status line is one line: the toast wraps the whole reason
            self.notify(text, title="Identify", severity="error", timeout=10, markup=False)
            return
        self.identified[message.path] = got
        if message.path == self.shown and self.sample.summary is not None:
            self.sample.show(attach(dict(self.sample.summary), got))
        shown = ", ".join("?" if s["boundary"] is None else str(s["boundary"]) for s in got["slots"])
        self.set_status(f"{name}: slots at b {shown} (b* in the table: identified against the model)")

    def _cancel_identify(self) -> None:
        self.workers.cancel_group(self, "identify")
        self.identifying = None
        self.query_one("#sample-pane").border_subtitle = ""
        self.set_status("identification cancelled")
