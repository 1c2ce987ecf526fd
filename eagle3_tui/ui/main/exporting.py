"""e and y in the sample view: the sample the sample view shows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from eagle3_tui.reports.model import Report
from eagle3_tui.reports.sample import sample_report
from eagle3_tui.ui.main.host import Parts
from eagle3_tui.ui.shared.exporting import Exporter, ExportScreen, local_folder

if TYPE_CHECKING:
    from eagle3_tui.engines.results.accept import AcceptResult


class MainView(Parts, ExportScreen, Protocol):
    pass


class SampleExporter(Exporter):
    """The main screen's e / y: the sample the sample view shows."""

    def __init__(self, screen: MainView) -> None:
        super().__init__(screen)
        self.main = screen

    def report(self) -> Report | str:
        view = self.main.pane.view
        if view.summary is None:
            return "nothing to export: e exports the sample shown (move onto a sample file)"
        # what the view shows: the drafter's result, or its running / error mark, read alike
        acceptance = cast("AcceptResult | None", view.acceptance)
        return sample_report(view.summary, where=self.main.where or "local", acceptance=acceptance)

    def say(self, text: str, *, error: bool = False) -> None:
        self.main.status_line.say(text, error=error)

    def inspected_folder(self) -> str | None:
        target = self.main.target
        return local_folder(self.main.source, target.path if target is not None else None)
