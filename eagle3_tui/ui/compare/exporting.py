"""e and y in the compare view: the comparison shown, and the drafter's acceptance with --drafter."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Protocol, cast

from eagle3_tui.reports.compare import compare_report
from eagle3_tui.reports.model import Report
from eagle3_tui.ui.shared.exporting import Exporter, ExportScreen, local_folder

if TYPE_CHECKING:
    from eagle3_tui.engines.results.accept import AcceptResult
    from eagle3_tui.engines.results.compare import ComparisonResult
    from eagle3_tui.sources.base import Source
    from eagle3_tui.target import Target
    from eagle3_tui.ui.shared.acceptance import Shown


class ComparedView(ExportScreen, Protocol):
    running: bool
    result: ComparisonResult | None
    drafter: str | None
    where: str
    source: Source
    data: Target | None
    a: str
    roles: tuple[str, str]  # what A and B are (swapped with s)

    def acceptance_results(self) -> dict[str, Shown | None]: ...

    def set_status(self, text: str, *, error: bool = False) -> None: ...


class CompareExporter(Exporter):
    """The compare view's e / y: the comparison shown, and the drafter's acceptance with --drafter."""

    def __init__(self, screen: ComparedView) -> None:
        super().__init__(screen)
        self.view = screen

    def report(self) -> Report | str:
        view = self.view
        if view.running or view.result is None:
            return "nothing to export yet: the comparison is running (or was cancelled: r runs it again)"
        accepted: dict[str, AcceptResult | None] | None = None
        if view.drafter is not None:  # what is no longer running is Source.accept's result
            accepted = {side: cast("AcceptResult", r) for side, r in view.acceptance_results().items()
                        if r is not None and not r.get("running")}
        return compare_report(view.result, where=view.where, acceptance=accepted, roles=view.roles)

    def say(self, text: str, *, error: bool = False) -> None:
        self.view.set_status(text, error=error)

    def inspected_folder(self) -> str | None:
        data = self.view.data
        return local_folder(self.view.source, data.path if data is not None else posixpath.dirname(self.view.a))
