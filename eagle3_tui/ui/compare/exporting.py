"""e and y in the compare view: the comparison shown, and the drafter's acceptance with --drafter."""

from __future__ import annotations

import posixpath
from typing import Any

from eagle3_tui.reports.model import Report
from eagle3_tui.ui.shared.exporting import Exporting, local_folder


class CompareExporting(Exporting):
    """The compare view: the comparison shown, and the drafter's acceptance with --drafter."""

    def export_report(self) -> Report | str:
        from eagle3_tui.reports.compare import compare_report
        from eagle3_tui.ui.shared.acceptance import CompareAcceptance

        if self.running or self.result is None:  # type: ignore[attr-defined]
            return "nothing to export yet: the comparison is running (or was cancelled: r runs it again)"
        accepted: dict[str, Any] | None = None
        if self.drafter is not None:  # type: ignore[attr-defined]
            line = self.query_one(CompareAcceptance)  # type: ignore[attr-defined]
            accepted = {side: r for side in ("a", "b", "fixed")
                        if (r := getattr(line, side)) is not None and not r.get("running")}
        return compare_report(self.result, where=self.where, acceptance=accepted)  # type: ignore[attr-defined]

    def export_say(self, text: str, *, error: bool = False) -> None:
        self.set_status(text, error=error)  # type: ignore[attr-defined]

    def inspected_folder(self) -> str | None:
        data = self.data  # type: ignore[attr-defined]
        return local_folder(self.source, data.path if data is not None else posixpath.dirname(self.a))  # type: ignore[attr-defined]
