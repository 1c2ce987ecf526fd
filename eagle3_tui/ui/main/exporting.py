"""e and y in the sample view; enter on a text file.

TextOpening (the main screen): `enter`/`l` on a file that is not named like a sample reads
its head through the Source and opens the text viewer when that is text; anything else is
loaded as a sample, as before (so binary garbage still reads "not a torch ... file").
"""

from __future__ import annotations

import posixpath

from textual import work

from eagle3_tui.names import printable
from eagle3_tui.reports.model import Report
from eagle3_tui.ui.shared.exporting import Exporting, local_folder


class SampleExporting(Exporting):
    """The main screen: the sample the sample view shows."""

    def export_report(self) -> Report | str:
        from eagle3_tui.reports.sample import sample_report

        view = self.pane.view  # type: ignore[attr-defined]
        if view.summary is None:
            return "nothing to export: e exports the sample shown (move onto a sample file)"
        return sample_report(view.summary, where=self.where or "local", acceptance=view.acceptance)  # type: ignore[attr-defined]

    def export_say(self, text: str, *, error: bool = False) -> None:
        self.status_line.say(text, error=error)  # type: ignore[attr-defined]

    def inspected_folder(self) -> str | None:
        target = self.target  # type: ignore[attr-defined]
        return local_folder(self.source, target.path if target is not None else None)  # type: ignore[attr-defined]




class TextOpening:
    """The main screen: enter on a file whose name is not a sample's tries it as text first."""

    def open_file(self, path: str) -> None:
        from eagle3_tui.ui.shared.format import is_sample_name

        if is_sample_name(posixpath.basename(path)) or self.source is None:  # type: ignore[attr-defined]
            self.pane.follow(path, delay=0)  # type: ignore[attr-defined]
            return
        self.status_line.say(f"reading {printable(posixpath.basename(path))}…")  # type: ignore[attr-defined]
        self.read_text_file(path)

    @work(exclusive=True, group="text-file")
    async def read_text_file(self, path: str) -> None:
        from eagle3_tui.sources.text_head import TEXT_LIMIT, as_text

        name = printable(posixpath.basename(path))
        try:
            head, size = await self.source.read_head(path, TEXT_LIMIT)  # type: ignore[attr-defined]
            truncated = size > len(head)
            text = as_text(head, truncated) if head else None
            why = f"{name}: empty (0 bytes)" if not head else f"{name}: not text"
        except Exception as err:  # noqa: BLE001 - SourceError or a bug: the sample loader says what is wrong
            text, size, truncated = None, 0, False
            why = f"{name}: cannot read it ({err})"
        if text is None:
            # the status line said "reading NAME…": it must not go on saying so (issue 34.5)
            self.status_line.say(f"{why}; tried as a sample, the panel says what it holds", error=True)  # type: ignore[attr-defined]
            self.pane.follow(path, delay=0)  # type: ignore[attr-defined]
            return
        from eagle3_tui.ui.shared.text_view import TextViewScreen

        self.status_line.say(f"{printable(posixpath.basename(path))}: text, shown read-only (esc back)")  # type: ignore[attr-defined]
        self.app.push_screen(TextViewScreen(path, self.where, text, size, truncated))  # type: ignore[attr-defined]
