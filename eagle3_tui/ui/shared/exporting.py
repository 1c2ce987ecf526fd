"""e and y, the same in the sample view, the compare view and the dataset view.

`e` writes what the view shows (its findings and the numbers behind them) as Markdown and JSON
into DATA_DIR/exports (reports/: the builders and the writer; DATA_DIR is --data-dir, else the
user data folder) and says where; `y` copies the Markdown to the clipboard with OSC 52
(App.copy_to_clipboard), which terminals that allow it honour. Each view's own exporter (in its
feature folder) says what its report is, from the result objects the screen already holds, and
where to say things: the screen's own status line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from eagle3_tui.names import terminal_text
from eagle3_tui.reports.model import Report
from eagle3_tui.reports.write import ExportError, exports_dir, write
from eagle3_tui.ui.shared.format import elide

if TYPE_CHECKING:
    from textual.app import App
    from textual.geometry import Size
    from textual.notifications import SeverityLevel

    from eagle3_tui.sources.base import Source

#: the OSC 52 note shown with `y` (tmux passes it on only with `set -g set-clipboard on`)
CLIPBOARD_NOTE = "OSC 52, where the terminal allows it"


class Exports(Protocol):
    @property
    def exporter(self) -> Exporter: ...


class ExportApp(Protocol):
    """What e and y need of the app: where exports go and the folder the TUI started on."""

    data_dir: str | None

    @property
    def size(self) -> Size: ...

    @property
    def main_screen(self) -> Exports: ...

    def copy_to_clipboard(self, text: str) -> None: ...


class ExportScreen(Protocol):
    """What an exporter needs of any screen: its app and its toasts."""

    @property
    def app(self) -> App[object]: ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...


class Exporter:
    """The e / y of one screen; a view's subclass says what its report is and where to say things."""

    def __init__(self, screen: ExportScreen) -> None:
        self.screen = screen

    def report(self) -> Report | str:
        """The report of what the view shows, or why there is none yet."""
        raise NotImplementedError

    def say(self, text: str, *, error: bool = False) -> None:
        raise NotImplementedError

    def inspected_folder(self) -> str | None:
        """The local folder being looked at (None: remote); exports never go inside it."""
        return None

    @property
    def app(self) -> ExportApp:
        return cast("ExportApp", self.screen.app)  # the Eagle3App, which screens do not import

    def export(self) -> None:
        report = self.report()
        if isinstance(report, str):
            self.say(report, error=True)
            # also a toast: a running scan's progress takes the status line back within a second
            self.screen.notify(report, title="Not exported", severity="warning", timeout=6, markup=False)
            return
        app = self.app
        try:
            # the view's folder and the one the TUI started on: D on a sub-folder must not write
            # into a --data-dir that sits elsewhere in the dataset
            started = app.main_screen.exporter.inspected_folder()
            md, js = write(report, exports_dir(app.data_dir), inspected=[self.inspected_folder(), started])
        except ExportError as err:
            self.say(str(err), error=True)
            return
        self.say(f"exported {md} + .json")  # a long path loses its middle there (StatusLine)
        room = max(20, app.size.width // 2 - 4)  # a toast is at most half the screen
        self.screen.notify(f"{elide(str(md), room)}\n{elide(str(js), room)}", title="Report exported", timeout=8,
                           markup=False)

    def copy(self) -> None:
        report = self.report()
        if isinstance(report, str):
            self.say(report, error=True)
            return
        self.app.copy_to_clipboard(terminal_text(report.markdown))  # as the file: pasted, it must not steer a terminal
        lines = report.markdown.count("\n")
        self.say(f"copied the {report.view} report ({lines} lines of Markdown) to the clipboard ({CLIPBOARD_NOTE})")


def local_folder(source: Source | None, path: str | None) -> str | None:
    return path if source is not None and source.host is None and path else None
