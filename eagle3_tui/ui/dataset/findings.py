"""The dataset view's findings, worst first, in plain words with their numbers (an OptionList:
the user selects one and enter filters the table to the files it names), then a tail of lines
that cannot be selected: the layers --model named (or what is being identified, or a hint)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import BindingType
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from eagle3_tui.dataset.marks import finding_paths, marked_paths
from eagle3_tui.dataset.verify import merge_later
from eagle3_tui.engines.results.findings import Finding
from eagle3_tui.names import printable
from eagle3_tui.ui.keys import DATASET_FINDINGS

LABEL = {"error": "ERROR", "warning": "WARN ", "info": "info "}


class DatasetFindings(OptionList):
    BINDINGS: ClassVar[list[BindingType]] = [*DATASET_FINDINGS]

    COMPONENT_CLASSES = OptionList.COMPONENT_CLASSES | {
        "findings--error", "findings--warning", "findings--info", "findings--ok", "findings--note",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self.findings: list[Finding] = []
        #: the tail: (style, text) lines after the findings, and how many options they are
        self.tail: list[tuple[str, str]] = []
        self._tail_options = 0

    # j/k: the findings are options; the tail (the layers) is not: past the last finding the
    # list scrolls on, so a tail taller than the box can be read

    def action_cursor_down(self) -> None:
        last = len(self.findings) - 1
        if last < 0 or (self.highlighted is not None and self.highlighted >= last):
            self.scroll_relative(y=1, animate=False)
            return
        super().action_cursor_down()

    def action_cursor_up(self) -> None:
        if not self.findings or self.highlighted in (None, 0):
            self.scroll_relative(y=-1, animate=False)
            return
        super().action_cursor_up()

    def _text(self, label: str, style: str, message: str) -> Text:
        text = Text()
        text.append(label, self.get_component_rich_style(style, partial=True))
        text.append(" " + printable(message, message=True))
        return text

    def show_note(self, message: str) -> None:
        """A line in place of the findings (scanning, computing, cancelled)."""
        self.findings = []
        self.tail, self._tail_options = [], 0
        self.clear_options()
        note = Text(printable(message, message=True), self.get_component_rich_style("findings--note", partial=True))
        self.add_option(Option(note, disabled=True))

    def show(self, findings: list[Finding], files: int, cancelled: bool, highlight: int = 0) -> None:
        """The findings (the tail kept after them); `highlight` is the one to highlight."""
        self.findings = list(findings)
        self._tail_options = 0
        self.clear_options()
        options = []
        for f in findings:
            n = len(finding_paths(f))
            files_text = f" ({n} file{'s' if n != 1 else ''})" if n else ""
            text = self._text(LABEL[f["severity"]], f"findings--{f['severity']}", "")
            text.append(f["code"] + files_text, "bold")
            text.append(": " + printable(f["message"], message=True))
            options.append(Option(text))
        if not findings:
            what = "of the files scanned so far" if cancelled else f"in {files:,} files"
            options.append(Option(self._text("  ok ", "findings--ok", f"nothing wrong found {what}"), disabled=True))
        self.add_options(options)
        self.show_tail(self.tail)
        if findings:
            self.highlighted = min(highlight, len(findings) - 1)

    def show_tail(self, lines: list[tuple[str, str]]) -> None:
        """Replace the lines after the findings; style is "note", "head" or "" (plain). The
        findings' options and the highlight stay as they are."""
        self.tail = list(lines)
        for _ in range(self._tail_options):
            self.remove_option_at_index(self.option_count - 1)
        styles = {"note": "findings--note", "head": "findings--info"}
        options = []
        for style, text in lines:
            line = Text(printable(text, message=True))
            if style:
                line.stylize(self.get_component_rich_style(styles[style], partial=True))
            options.append(Option(line, disabled=True))
        self._tail_options = len(options)
        self.add_options(options)


def merged(before: list[Finding], extra: list[Finding],
           keep: list[Finding | None]) -> tuple[list[Finding], set[str], list[int | None]]:
    """Findings a later step made (the layers, the acceptance) sorted in among `before`: the new
    list, the files no finding names any more (--model verified files a signature warning named)
    and where each finding of `keep` (the filter's, the highlighted one) now sits."""
    findings = merge_later(before, extra)
    cleared = {p for f in before for p in marked_paths(f)} - {p for f in findings for p in marked_paths(f)}
    at = [next((j for j, f in enumerate(findings) if f is k), None) if k is not None else None for k in keep]
    return findings, cleared, at
