"""Bookmarks of suspect samples: a SQLite store shared by the TUI and the CLI (stdlib only).

    store = open_store(data_dir)          # data_dir None -> userdirs.data_dir()
    store.toggle(make_key(host, path), headline_from_summary(summary))
    store.keys()                          # frozenset of keys, for the browser's marker
"""

from eagle3_tui.bookmarks.headline import headline_from_summary, headline_text
from eagle3_tui.bookmarks.keys import TargetError, TargetParts, make_key, split_target, target_key
from eagle3_tui.bookmarks.store import (
    SCHEMA_VERSION,
    Bookmark,
    BookmarkError,
    BookmarkStore,
    BookmarkStoreRefused,
    clean_tags,
    open_store,
    store_path,
)

__all__ = [
    "SCHEMA_VERSION",
    "Bookmark",
    "BookmarkError",
    "BookmarkStore",
    "BookmarkStoreRefused",
    "TargetError",
    "TargetParts",
    "clean_tags",
    "headline_from_summary",
    "headline_text",
    "make_key",
    "open_store",
    "split_target",
    "store_path",
    "target_key",
]
