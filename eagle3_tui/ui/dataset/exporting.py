"""e and y in the dataset view: its findings, the numbers of the files they name, the layers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from eagle3_tui.reports.dataset import dataset_report
from eagle3_tui.reports.model import Report
from eagle3_tui.ui.shared.exporting import Exporter, ExportScreen, local_folder

if TYPE_CHECKING:
    from eagle3_tui.dataset.shapes import LayersEntry
    from eagle3_tui.engines.results.findings import Finding
    from eagle3_tui.sources.base import Source
    from eagle3_tui.target import Target
    from eagle3_tui.ui.dataset.findings import DatasetFindings
    from eagle3_tui.ui.dataset.model import DatasetRows
    from eagle3_tui.ui.dataset.serving_table import ServingTable


class ScannedView(ExportScreen, Protocol):
    state: str
    folder: Target
    where: str
    source: Source
    findings: list[Finding]
    rows: DatasetRows
    layer_entries: list[LayersEntry]

    @property
    def findings_list(self) -> DatasetFindings: ...

    @property
    def serving(self) -> ServingTable: ...

    def set_status(self, text: str, *, error: bool = False) -> None: ...


class DatasetExporter(Exporter):
    """The dataset view's e / y: its findings, the numbers of the files they name, the layers."""

    def __init__(self, screen: ScannedView) -> None:
        super().__init__(screen)
        self.view = screen

    def report(self) -> Report | str:
        view = self.view
        if view.state in ("scanning", "findings"):
            return "nothing to export yet: the findings come when the scan ends (esc cancels it)"
        lines = [text for _, text in view.findings_list.tail] if view.layer_entries else None
        return dataset_report(view.folder.path, where=view.where, findings=view.findings,
                              records=view.rows.records, state=view.state,
                              layers=view.layer_entries, layer_lines=lines,
                              serving=view.serving.export())

    def say(self, text: str, *, error: bool = False) -> None:
        self.view.set_status(text, error=error)

    def inspected_folder(self) -> str | None:
        return local_folder(self.view.source, self.view.folder.path)
