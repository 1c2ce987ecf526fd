"""Bookmarks in the main screen: b toggles, N edits the note, B lists and jumps; the marker.

`Bookmarking` is state, not a view: it holds the store, the marks of the open folder and the
place (user, host, port) the screen has open, and is told the file under the cursor by its
caller. What the user should see it posts as messages (a status line, a jump, new marks) to
the screen that owns it, which decides how to show them. The store is opened on first use (and
again after a failure, so moving a bad file aside is enough to recover); a store that cannot be
used is reported, never raised.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message

from eagle3_tui.bookmarks import (
    BookmarkError,
    BookmarkStore,
    headline_from_summary,
    open_store,
)
from eagle3_tui.bookmarks.headline import Headline
from eagle3_tui.engines.results.summary import Summary
from eagle3_tui.names import printable
from eagle3_tui.sources.base import Entry
from eagle3_tui.target import Target, TargetError, parse_target
from eagle3_tui.ui.bookmarks.messages import BookmarkJump, MarksChanged, StoreOpened
from eagle3_tui.ui.browser.paths import folder_and_name
from eagle3_tui.ui.shared.messages import StatusMessage
from eagle3_tui.userdirs import is_inside

if TYPE_CHECKING:
    from eagle3_tui.ui.bookmarks.screen import BookmarksScreen, TextPrompt

#: drawn before a bookmarked file in the browser
MARKER = "*"

#: how often to look for bookmarks made by another eagle3-tui (one cheap PRAGMA)
POLL_SECONDS = 2.0


class Bookmarking:
    def __init__(self, data_dir: str | None, post: Callable[[Message], object], start: Target | None = None) -> None:
        #: where the store lives (None: the user data folder, or EAGLE3_TUI_DATA_DIR)
        self.data_dir = data_dir
        self._post = post
        self._store: BookmarkStore | None = None
        #: the target the screen has open, canonical (its place keys the bookmarks); None: nothing
        self.place: Target | None = None
        #: the open folder's path (what the marks are of)
        self.folder = ""
        #: names in the open folder that are bookmarked (what the browser marks)
        self.marked: frozenset[str] = frozenset()
        self._expect: tuple[str, str] | None = None  # (folder, name) a jump should land on
        #: the local folder the TUI started on: a store inside it is never opened (the CLI
        #: refuses such a --data-dir at start; this holds for an app made another way)
        self.forbidden = start.path if start is not None and not start.is_remote else None

    def _say(self, text: str, *, error: bool = False) -> None:
        self._post(StatusMessage(text, error=error))

    def _fail(self, err: BookmarkError) -> None:
        self._say(str(err), error=True)

    # ----- the store

    def open_in_thread(self) -> None:
        """Run in a worker thread (creating the store fsyncs, which must not delay a frame)."""
        try:
            store = self._open()
        except BookmarkError:
            return  # reported when the user first uses bookmarks (b, N, B)
        self._post(StoreOpened(store))

    def opened(self, store: BookmarkStore) -> None:
        if self._store is None:
            self._store = store
            self.refresh_marks()
        else:
            store.close()

    def store(self) -> BookmarkStore | None:
        """The open store; opens it now when needed (an action must not wait for the thread)."""
        if self._store is None:
            try:
                self._store = self._open()
            except BookmarkError as err:
                self._fail(err)
        return self._store

    def _open(self) -> BookmarkStore:
        from eagle3_tui.bookmarks.store import store_path  # lazy: the sqlite3 store opens in this worker

        folder = store_path(self.data_dir).parent
        if self.forbidden is not None and is_inside(folder, self.forbidden):
            raise BookmarkError(f"bookmarks off: {folder} is inside the dataset (start with --data-dir elsewhere)")
        return open_store(self.data_dir)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    # ----- keys of files in the open source

    def key_of(self, path: str) -> str | None:
        return None if self.place is None else self.place.with_path(path).key

    def _headline(self, path: str, summary: Summary | None) -> Headline | None:
        if summary and summary.get("path") == path:
            return headline_from_summary(summary)
        return None

    # ----- the marker

    def marker(self, entry: Entry) -> str | None:
        return MARKER if entry.name in self.marked else None

    def show_folder(self, place: Target | None, folder: str) -> None:
        """The screen opened `folder` (on `place`): mark what is bookmarked there."""
        self.place, self.folder = place, folder
        self.refresh_marks()

    def refresh_marks(self) -> None:
        """Recompute which names of the open folder are bookmarked; post MarksChanged if that changed."""
        store = self._store  # not open yet: opened() calls us again
        probe = self.key_of(posixpath.join(self.folder or "/", "x")) if self.folder else None
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
            self._post(MarksChanged())

    def poll(self) -> None:
        """Pick up bookmarks another eagle3-tui made or removed."""
        if self._store is None:
            return
        try:
            if self._store.changed_elsewhere():
                self.refresh_marks()
        except BookmarkError as err:
            self._fail(err)

    # ----- actions (the caller names the file under the cursor and the summary shown)

    def toggle(self, path: str | None, summary: Summary | None) -> None:
        store = self.store()
        if store is None:
            return
        key = self.key_of(path) if path else None
        if path is None or key is None:
            self._say("no file under the cursor to bookmark")
            return
        try:
            now = store.toggle(key, headline=self._headline(path, summary))
        except BookmarkError as err:
            self._fail(err)
            return
        self._say(("bookmarked " if now else "bookmark removed: ") + key)
        self.refresh_marks()

    def note_prompt(self, path: str | None, summary: Summary | None) -> tuple[TextPrompt, Callable] | None:
        """The dialog that edits the note of `path`'s bookmark, and what to call with its answer."""
        store = self.store()
        if store is None:
            return None
        key = self.key_of(path) if path else None
        if path is None or key is None:
            self._say("no file under the cursor to write a note for")
            return None
        try:
            existing = store.get(key)
        except BookmarkError as err:
            self._fail(err)
            return None
        headline = None if existing else self._headline(path, summary)

        def save(note: str | None) -> None:
            if note is None:
                return
            try:
                store.set_note(key, note, headline=headline)
            except BookmarkError as err:
                self._fail(err)
                return
            self._say(("note saved: " if existing else "bookmarked with a note: ") + key)
            self.refresh_marks()

        from eagle3_tui.ui.bookmarks.screen import TextPrompt  # lazy: with DataTable, ~10 ms not paid at start

        title = ("Note for " if existing else "Bookmark with a note: ") + key
        return TextPrompt(title, existing.note if existing else "", placeholder="why is it suspect?"), save

    def list_screen(self, path: str | None) -> tuple[BookmarksScreen, Callable] | None:
        """The bookmark list (cursor on `path`'s bookmark), and what to call when it closes."""
        store = self.store()
        if store is None:
            return None
        from eagle3_tui.ui.bookmarks.screen import BookmarksScreen  # lazy: a screen opened only on a key

        select = self.key_of(path) if path else None
        return BookmarksScreen(store, select=select), self._list_closed

    def _list_closed(self, key: str | None) -> None:
        self.refresh_marks()  # notes, tags or deletions may have changed the marks
        if key:
            self.jump(key)

    def jump(self, key: str) -> None:
        """Ask the screen to show a bookmarked sample (BookmarkJump), remembering where it should land."""
        try:
            there = parse_target(key).canonical()
        except TargetError as err:
            self._say(str(err), error=True)
            return
        folder, name = folder_and_name(there.path)
        self._expect = (folder, name)
        self._post(BookmarkJump(there.with_path(folder), name))

    def summary_loaded(self, path: str, summary: Summary) -> None:
        """A bookmark made before its sample had loaded gets its headline now."""
        store, key = self._store, self.key_of(path)
        if store is None or key is None or summary.get("error") or key not in store.keys():
            return
        try:
            store.fill_headline(key, headline_from_summary(summary))
        except BookmarkError as err:
            self._fail(err)

    def listing_done(self, folder: str, error: str | None, current: str | None) -> str | None:
        """After a jump: what to tell the user when the bookmarked file is no longer in its
        folder (`current`: the name under the cursor). None: nothing to say."""
        self.refresh_marks()
        if self._expect is None or error:
            self._expect = None
            return None
        expected_folder, name = self._expect
        if posixpath.normpath(folder) != posixpath.normpath(expected_folder):
            return None
        self._expect = None
        if current != name:
            return printable(f"{name} is no longer in {folder}", message=True)
        return None
