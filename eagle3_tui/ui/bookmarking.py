"""Bookmarks in the main screen: b toggles, N edits the note, B lists and jumps; the marker.

The main screen owns one Bookmarking and calls it from its actions and handlers. The store is
opened on first use (and again after a failure, so moving a bad file aside is enough to
recover); a store that cannot be used is reported in the status line, never raised.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from eagle3_tui.bookmarks import (
    BookmarkError,
    BookmarkStore,
    headline_from_summary,
    open_store,
)
from eagle3_tui.names import printable
from eagle3_tui.sources.base import Entry
from eagle3_tui.target import Target, TargetError, parse_target
from eagle3_tui.ui.screens.bookmarks import MARKER, BookmarksScreen, TextPrompt

if TYPE_CHECKING:
    from eagle3_tui.ui.screens.main import MainScreen

#: how often to look for bookmarks made by another eagle3-tui (one cheap PRAGMA)
POLL_SECONDS = 2.0


class Bookmarking:
    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self._store: BookmarkStore | None = None
        #: names in the open folder that are bookmarked (what the browser marks)
        self.marked: frozenset[str] = frozenset()
        self._parts_of: tuple[str, Target] | None = None
        self._expect: tuple[str, str] | None = None  # (folder, name) a jump should land on

    # ----- the store

    def start(self) -> None:
        """Open the store in a thread: creating it fsyncs, which must not delay a frame."""
        self.screen.run_worker(self._open_in_thread, thread=True, group="bookmarks-open")

    def _open_in_thread(self) -> None:
        try:
            store = open_store(self._data_dir())
        except BookmarkError:
            return  # reported when the user first uses bookmarks (b, N, B)
        self.screen.app.call_from_thread(self._opened, store)

    def _opened(self, store: BookmarkStore) -> None:
        if self._store is None:
            self._store = store
            self.refresh_marks()
        else:
            store.close()

    def _data_dir(self) -> str | None:
        return getattr(self.screen.app, "data_dir", None)

    def store(self) -> BookmarkStore | None:
        """The open store; opens it now when needed (an action must not wait for the thread)."""
        if self._store is None:
            try:
                self._store = open_store(self._data_dir())
            except BookmarkError as err:
                self.screen.set_status(str(err), error=True)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def _fail(self, err: BookmarkError) -> None:
        self.screen.set_status(str(err), error=True)

    # ----- keys of files in the open source

    @property
    def parts(self) -> Target | None:
        """Host, user and port of the target the screen has open (host None: local)."""
        target = self.screen.app.target
        if self._parts_of is None or self._parts_of[0] != target:
            try:
                self._parts_of = (target, parse_target(target).canonical())
            except TargetError:
                return None
        return self._parts_of[1]

    def key_of(self, path: str) -> str | None:
        parts = self.parts
        if parts is None:
            return None
        return parts.with_path(path).key

    def current_path(self) -> str | None:
        """The file under the browser's cursor, else the sample the panel shows."""
        screen = self.screen
        entry = screen.browser.current
        if entry is not None and entry.kind == "file":
            return posixpath.join(screen.path, entry.name)
        return screen.shown

    def _headline(self, path: str) -> dict[str, Any] | None:
        summary = self.screen.sample.summary
        if summary and summary.get("path") == path:
            return headline_from_summary(summary)
        return None

    # ----- the marker

    def marker(self, entry: Entry) -> str | None:
        return MARKER if entry.name in self.marked else None

    def refresh_marks(self) -> None:
        """Recompute which names of the open folder are bookmarked; redraw if that changed."""
        store, screen = self._store, self.screen  # not open yet: _opened() calls us again
        probe = self.key_of(posixpath.join(screen.path or "/", "x")) if screen.path else None
        marked: frozenset[str] = frozenset()
        if store is not None and probe is not None:
            prefix = probe[:-1]
            try:
                keys = store.keys()
            except BookmarkError as err:
                self._fail(err)
                keys = frozenset()
            marked = frozenset(
                k[len(prefix) :] for k in keys if k.startswith(prefix) and "/" not in k[len(prefix) :]
            )
        if marked != self.marked:
            self.marked = marked
            screen.browser.refresh()

    def poll(self) -> None:
        """Pick up bookmarks another eagle3-tui made or removed."""
        if self._store is None:
            return
        try:
            if self._store.changed_elsewhere():
                self.refresh_marks()
        except BookmarkError as err:
            self._fail(err)

    # ----- actions

    def toggle(self) -> None:
        path, store = self.current_path(), self.store()
        if store is None:
            return
        key = self.key_of(path) if path else None
        if key is None:
            self.screen.set_status("no file under the cursor to bookmark")
            return
        try:
            now = store.toggle(key, headline=self._headline(path))
        except BookmarkError as err:
            self._fail(err)
            return
        self.screen.set_status(("bookmarked " if now else "bookmark removed: ") + key)
        self.refresh_marks()

    def edit_note(self) -> None:
        path, store = self.current_path(), self.store()
        if store is None:
            return
        key = self.key_of(path) if path else None
        if key is None:
            self.screen.set_status("no file under the cursor to write a note for")
            return
        try:
            existing = store.get(key)
        except BookmarkError as err:
            self._fail(err)
            return

        def save(note: str | None) -> None:
            if note is None:
                return
            try:
                store.set_note(key, note, headline=None if existing else self._headline(path))
            except BookmarkError as err:
                self._fail(err)
                return
            self.screen.set_status(("note saved: " if existing else "bookmarked with a note: ") + key)
            self.refresh_marks()

        title = ("Note for " if existing else "Bookmark with a note: ") + key
        prompt = TextPrompt(title, existing.note if existing else "", placeholder="why is it suspect?")
        self.screen.app.push_screen(prompt, save)

    def open_list(self) -> None:
        store = self.store()
        if store is None:
            return
        path = self.current_path()
        select = self.key_of(path) if path else None
        self.screen.app.push_screen(BookmarksScreen(store, select=select), self._list_closed)

    def _list_closed(self, target: str | None) -> None:
        self.refresh_marks()  # notes, tags or deletions may have changed the marks
        if target:
            self.jump(target)

    def jump(self, target: str) -> None:
        """Show the bookmarked sample: open its folder, connecting to its host when needed."""
        screen = self.screen
        try:
            there = parse_target(target).canonical()
        except TargetError as err:
            screen.set_status(str(err), error=True)
            return
        here = self.parts
        folder, name = posixpath.split(there.path)
        folder = folder or ("/" if there.path.startswith("/") else ".")
        self._expect = (folder, name)
        same_place = here is not None and here.place == there.place
        if same_place and screen.source is not None:
            screen.open_folder(folder, select=name)
        else:
            screen.switch_target(target)

    def summary_loaded(self, path: str, summary: dict[str, Any]) -> None:
        """A bookmark made before its sample had loaded gets its headline now."""
        store, key = self._store, self.key_of(path)
        if store is None or key is None or summary.get("error") or key not in store.keys():
            return
        try:
            store.fill_headline(key, headline_from_summary(summary))
        except BookmarkError as err:
            self._fail(err)

    def listing_done(self, folder: str, error: str | None) -> None:
        """After a jump: say so when the bookmarked file is no longer in its folder."""
        self.refresh_marks()
        if self._expect is None or error:
            self._expect = None
            return
        expected_folder, name = self._expect
        if posixpath.normpath(folder) != posixpath.normpath(expected_folder):
            return
        self._expect = None
        current = self.screen.browser.current
        if current is None or current.name != name:
            # a toast: the status line is rewritten by the cursor's own news right after this
            self.screen.notify(printable(f"{name} is no longer in {folder}", message=True), title="Bookmarked file gone",
                               severity="warning", timeout=8, markup=False)
