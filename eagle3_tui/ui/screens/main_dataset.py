"""The dataset view from the main screen: `D` opens it on the folder under the cursor
(ui/screens/dataset.py), its enter/b/t come back here as messages, and the browser marks the
files a scan has records for (ui/dataset_marks.py, one cache query per listing, in a thread).

A part of MainScreen (a mixin): the state it reads lives on the screen.
"""

from __future__ import annotations

import posixpath

from textual import work

from eagle3_tui.ui.messages import FileAction, ScanMarksLoaded, ScanMarksWanted, ShowSample, StatusMessage
from eagle3_tui.ui.pins import Pin


class DatasetLinks:
    """MainScreen's side of the dataset view."""

    def action_dataset(self) -> None:
        if self.source is None or self.target is None:
            self.set_status("nothing open to scan yet", error=True)
            return
        entry = self.browser.current
        folder = self.path
        if entry is not None and entry.kind == "dir":
            folder = posixpath.join(self.path, entry.name)
        from eagle3_tui.ui.screens.dataset import DatasetScreen

        data = self.target.with_path(folder)
        analysis = self.app.analysis  # --model names the layers (on the data's machine only)
        self.app.push_screen(DatasetScreen(self.source, data, self.where, self.post_message,
                                           model=analysis.path_for("model", data),
                                           drafter=analysis.path_for("drafter", data), model_given=analysis.model))

    def on_show_sample(self, message: ShowSample) -> None:
        """The dataset view opens a sample: the browser moves to it (as a bookmark jump does)."""
        self.open_folder(message.folder.path, select=message.name)

    def on_file_action(self, message: FileAction) -> None:
        """b / t in the dataset view, answered in its status line."""
        if message.what == "pin":
            place = self._place()
            pin = Pin(message.path, self.where, place.with_path(message.path) if place is not None else None)
            text, error = self.pins.pin_training(pin)
            self._show_pins()
        else:
            store = self.bookmarking.store()
            key = self.bookmarking.key_of(message.path)
            if store is None or key is None:
                text, error = "bookmarks are not available", True
            else:
                self.bookmarking.toggle(message.path, None)
                now = key in store.keys()
                text, error = ("bookmarked " if now else "bookmark removed: ") + key, False
        message.reply(StatusMessage(text, error=error))

    def on_scan_marks_wanted(self, message: ScanMarksWanted) -> None:
        self.load_scan_marks()

    def load_scan_marks(self) -> None:
        if self.source is not None and self.listing_done and not self.listing_error:
            self._scan_marks_worker(self.path, self.generation)

    @work(exclusive=True, group="scan-marks", thread=True)
    def _scan_marks_worker(self, folder: str, generation: int) -> None:
        from eagle3_tui.dataset.scan import cache_host
        from eagle3_tui.ui.dataset_marks import scan_marks

        # read here, not passed in: Textual repr()s a worker's arguments on the event loop
        # (~200 ms for 100,000 entries) and a finished thread worker stays referenced by its
        # executor thread, which kept the folder's whole listing alive after leaving it. The
        # list is replaced, never mutated; a newer folder's result is dropped by generation.
        entries = self.browser.entries
        source = self.source
        if source is None:
            return
        try:
            marks = scan_marks(cache_host(source), folder, source.host is None, entries)
        except Exception:  # noqa: BLE001 - marks are a hint; an unusable cache gives none
            marks = {}
        self.post_message(ScanMarksLoaded(generation, marks))

    def on_scan_marks_loaded(self, message: ScanMarksLoaded) -> None:
        if message.generation == self.generation and message.marks != self.browser.scan_marks:
            self.browser.scan_marks = message.marks
            self.browser.refresh()
