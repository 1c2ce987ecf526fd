"""Enter on a file whose name is not a sample's: its head is read through the Source and the
text viewer opens when that is text; anything else is loaded as a sample, as before (so binary
garbage still reads "not a torch ... file")."""

from __future__ import annotations

import posixpath

from eagle3_tui.names import printable
from eagle3_tui.sources.text_head import TEXT_LIMIT, as_text
from eagle3_tui.ui.main.host import Parts
from eagle3_tui.ui.shared.format import is_sample_name


class TextOpener:
    def __init__(self, screen: Parts) -> None:
        self.screen = screen

    def open(self, path: str) -> None:
        screen = self.screen
        if is_sample_name(posixpath.basename(path)) or screen.source is None:
            screen.pane.follow(path, delay=0)
            return
        screen.status_line.say(f"reading {printable(posixpath.basename(path))}…")
        screen.run_worker(self._read(path), name="read_text_file", group="text-file", exclusive=True)

    async def _read(self, path: str) -> None:
        screen, source = self.screen, self.screen.source
        name = printable(posixpath.basename(path))
        try:
            assert source is not None  # set before any file could be opened
            head, size = await source.read_head(path, TEXT_LIMIT)
            truncated = size > len(head)
            text = as_text(head, truncated) if head else None
            why = f"{name}: empty (0 bytes)" if not head else f"{name}: not text"
        except Exception as err:  # noqa: BLE001 - SourceError or a bug: the sample loader says what is wrong
            text, size, truncated = None, 0, False
            why = f"{name}: cannot read it ({err})"
        if text is None:
            # the status line said "reading NAME…": it must not go on saying so (issue 34.5)
            screen.status_line.say(f"{why}; tried as a sample, the panel says what it holds", error=True)
            screen.pane.follow(path, delay=0)
            return
        from eagle3_tui.ui.shared.text_view import TextViewScreen  # lazy: a screen opened only on a text file

        screen.status_line.say(f"{name}: text, shown read-only (esc back)")
        screen.app.push_screen(TextViewScreen(path, screen.where, text, size, truncated))
