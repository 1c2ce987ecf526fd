"""e and y, the same in the sample view, the compare view and the dataset view.

`e` writes what the view shows (its findings and the numbers behind them) as Markdown and JSON
into DATA_DIR/exports (reports/: the builders and the writer; DATA_DIR is --data-dir, else the
user data folder) and says where; `y` copies the Markdown to the clipboard with OSC 52
(App.copy_to_clipboard), which terminals that allow it honour. Each view's own exporter (in its
feature folder) says what its report is, from the result objects the screen already holds, and
where to say things: the screen's own status line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eagle3_tui.names import terminal_text
from eagle3_tui.reports.model import Report
from eagle3_tui.reports.write import ExportError, exports_dir, write
from eagle3_tui.ui.shared.format import elide

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


def local_folder(source: Source | None, path: str | None) -> str | None:
    return path if source is not None and source.host is None and path else None
