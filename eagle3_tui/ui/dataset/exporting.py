"""e and y in the dataset view: its findings, the numbers of the files they name, the layers."""

from __future__ import annotations

from eagle3_tui.reports.model import Report
from eagle3_tui.ui.shared.exporting import Exporting, local_folder


class DatasetExporting(Exporting):
    """The dataset view: its findings, the numbers of the files they name, the layers."""

    def export_report(self) -> Report | str:
        from eagle3_tui.reports.dataset import dataset_report

        if self.state in ("scanning", "findings"):  # type: ignore[attr-defined]
            return "nothing to export yet: the findings come when the scan ends (esc cancels it)"
        from eagle3_tui.ui.dataset.serving_table import ServingTable

        lines = [text for _, text in self.findings_list.tail] if self.layer_entries else None  # type: ignore[attr-defined]
        return dataset_report(self.folder.path, where=self.where, findings=self.findings,  # type: ignore[attr-defined]
                              records=self.rows.records, state=self.state,  # type: ignore[attr-defined]
                              layers=self.layer_entries, layer_lines=lines,  # type: ignore[attr-defined]
                              serving=self.query_one(ServingTable).export())  # type: ignore[attr-defined]

    def export_say(self, text: str, *, error: bool = False) -> None:
        self.set_status(text, error=error)  # type: ignore[attr-defined]

    def inspected_folder(self) -> str | None:
        return local_folder(self.source, self.folder.path)  # type: ignore[attr-defined]
