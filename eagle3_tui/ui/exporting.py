"""e and y in the sample view, the compare view and the dataset view; enter on a text file.

`e` writes what the view shows (its findings and the numbers behind them) as Markdown and JSON
into DATA_DIR/exports (reports/: the builders and the writer; DATA_DIR is --data-dir, else the
user data folder) and says where; `y` copies the Markdown to the clipboard with OSC 52
(App.copy_to_clipboard), which terminals that allow it honour. Each screen mixes in its
class below; the mixins read the result objects the screens already hold and say things in the
screen's own status line, so the screens gain two keys and one base class each.

TextOpening (the main screen): `enter`/`l` on a file that is not named like a sample reads
its head through the Source and opens the text viewer when that is text; anything else is
loaded as a sample, as before (so binary garbage still reads "not a torch ... file").
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from textual import work

from eagle3_tui.names import printable, terminal_text
from eagle3_tui.reports.model import Report
from eagle3_tui.reports.write import ExportError, exports_dir, write
from eagle3_tui.ui.format import elide

if TYPE_CHECKING:
    from eagle3_tui.sources.base import Source

#: the OSC 52 note shown with `y` (tmux passes it on only with `set -g set-clipboard on`)
CLIPBOARD_NOTE = "OSC 52, where the terminal allows it"


class Exporting:
    """The e / y actions; a screen's mixin below says what its report is and where to say things."""

    def export_report(self) -> Report | str:
        """The report of what the view shows, or why there is none yet."""
        raise NotImplementedError

    def export_say(self, text: str, *, error: bool = False) -> None:
        raise NotImplementedError

    def inspected_folder(self) -> str | None:
        """The local folder being looked at (None: remote); exports never go inside it."""
        return None

    def action_export(self) -> None:
        report = self.export_report()
        if isinstance(report, str):
            self.export_say(report, error=True)
            # also a toast: a running scan's progress takes the status line back within a second
            self.notify(report, title="Not exported", severity="warning", timeout=6, markup=False)  # type: ignore[attr-defined]
            return
        try:
            # the view's folder and the one the TUI started on: D on a sub-folder must not write
            # into a --data-dir that sits elsewhere in the dataset
            started = self.app.main_screen.inspected_folder()  # type: ignore[attr-defined]
            md, js = write(report, exports_dir(self.app.data_dir), inspected=[self.inspected_folder(), started])  # type: ignore[attr-defined]
        except ExportError as err:
            self.export_say(str(err), error=True)
            return
        self.export_say(f"exported {md} + .json")  # a long path loses its middle there (StatusLine)
        room = max(20, self.app.size.width // 2 - 4)  # type: ignore[attr-defined]  # a toast is at most half the screen
        self.notify(f"{elide(str(md), room)}\n{elide(str(js), room)}", title="Report exported", timeout=8, markup=False)  # type: ignore[attr-defined]

    def action_copy_report(self) -> None:
        report = self.export_report()
        if isinstance(report, str):
            self.export_say(report, error=True)
            return
        self.app.copy_to_clipboard(terminal_text(report.markdown))  # type: ignore[attr-defined]  # as the file: pasted, it must not steer a terminal
        lines = report.markdown.count("\n")
        self.export_say(f"copied the {report.view} report ({lines} lines of Markdown) to the clipboard ({CLIPBOARD_NOTE})")


def _local(source: Source | None, path: str | None) -> str | None:
    return path if source is not None and source.host is None and path else None


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
        return _local(self.source, target.path if target is not None else None)  # type: ignore[attr-defined]


class CompareExporting(Exporting):
    """The compare view: the comparison shown, and the drafter's acceptance with --drafter."""

    def export_report(self) -> Report | str:
        from eagle3_tui.reports.compare import compare_report
        from eagle3_tui.ui.widgets.acceptance import CompareAcceptance

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
        return _local(self.source, data.path if data is not None else posixpath.dirname(self.a))  # type: ignore[attr-defined]


class DatasetExporting(Exporting):
    """The dataset view: its findings, the numbers of the files they name, the layers."""

    def export_report(self) -> Report | str:
        from eagle3_tui.reports.dataset import dataset_report

        if self.state in ("scanning", "findings"):  # type: ignore[attr-defined]
            return "nothing to export yet: the findings come when the scan ends (esc cancels it)"
        from eagle3_tui.ui.widgets.serving_table import ServingTable

        lines = [text for _, text in self.findings_list.tail] if self.layer_entries else None  # type: ignore[attr-defined]
        return dataset_report(self.folder.path, where=self.where, findings=self.findings,  # type: ignore[attr-defined]
                              records=self.rows.records, state=self.state,  # type: ignore[attr-defined]
                              layers=self.layer_entries, layer_lines=lines,  # type: ignore[attr-defined]
                              serving=self.query_one(ServingTable).export())  # type: ignore[attr-defined]

    def export_say(self, text: str, *, error: bool = False) -> None:
        self.set_status(text, error=error)  # type: ignore[attr-defined]

    def inspected_folder(self) -> str | None:
        return _local(self.source, self.folder.path)  # type: ignore[attr-defined]


class TextOpening:
    """The main screen: enter on a file whose name is not a sample's tries it as text first."""

    def open_file(self, path: str) -> None:
        from eagle3_tui.ui.format import is_sample_name

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
        from eagle3_tui.ui.screens.text_view import TextViewScreen

        self.status_line.say(f"{printable(posixpath.basename(path))}: text, shown read-only (esc back)")  # type: ignore[attr-defined]
        self.app.push_screen(TextViewScreen(path, self.where, text, size, truncated))  # type: ignore[attr-defined]
