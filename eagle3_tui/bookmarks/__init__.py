"""Bookmarks of suspect samples: a SQLite store shared by the TUI and the CLI (stdlib only).

    store = open_store(data_dir)          # data_dir None -> userdirs.data_dir()
    store.toggle(target.with_path(path).key, headline_from_summary(summary))   # target: eagle3_tui.target.Target
    store.keys()                          # frozenset of keys, for the browser's marker
"""

from eagle3_tui.bookmarks.headline import headline_from_summary, headline_text
from eagle3_tui.bookmarks.model import Bookmark, BookmarkError, BookmarkStoreRefused, clean_tags
from eagle3_tui.bookmarks.sqlite_file import SCHEMA_VERSION
from eagle3_tui.bookmarks.store import BookmarkStore, open_store, store_path

__all__ = [
    "SCHEMA_VERSION",
    "Bookmark",
    "BookmarkError",
    "BookmarkStore",
    "BookmarkStoreRefused",
    "clean_tags",
    "headline_from_summary",
    "headline_text",
    "open_store",
    "store_path",
]
