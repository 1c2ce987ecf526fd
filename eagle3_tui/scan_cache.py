"""Scan records kept in the user cache (SQLite), keyed by host, path, size and mtime.

A second scan of an unchanged dataset then reads nothing but the listing; a file whose size or
mtime changed is scanned again. The cache lives in userdirs.cache_dir() (EAGLE3_TUI_CACHE_DIR
overrides it), never in the dataset. A quick record is reused only for the same --rows; a full
record serves quick scans too.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from eagle3_tui.userdirs import cache_dir

SCHEMA = 2  # 2: fingerprints from the first and last valid rows (same in quick and full)


def mode_name(full: bool, rows: int) -> str:
    return "full" if full else f"quick{rows}"


class ScanCache:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else cache_dir() / "scan.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA:  # an older layout: the records are only a cache, start again
            self._db.execute("DROP TABLE IF EXISTS records")
            self._db.execute(f"PRAGMA user_version={SCHEMA}")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS records (host TEXT, path TEXT, size INTEGER, mtime REAL,"
            " mode TEXT, record TEXT, PRIMARY KEY (host, path))"
        )
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    @staticmethod
    def _prefix(root: str) -> str:
        return root.rstrip("/") + "/"

    def known(self, host: str, root: str, full: bool, rows: int) -> dict[str, tuple[int, float, str]]:
        """rel path -> (size, mtime, record JSON text) of usable records under root."""
        prefix = self._prefix(root)
        wanted = {"full"} if full else {"full", mode_name(False, rows)}
        cur = self._db.execute(
            "SELECT path, size, mtime, mode, record FROM records WHERE host = ? AND path >= ? AND path < ?",
            (host, prefix, prefix[:-1] + "0"),  # "0" is the character after "/"
        )
        n = len(prefix)
        return {p[n:]: (size, mtime, rec) for p, size, mtime, mode, rec in cur if mode in wanted}

    def put(self, host: str, root: str, records: list[dict[str, Any]], full: bool, rows: int) -> None:
        prefix = self._prefix(root)
        mode = mode_name(full, rows)
        rows_ = [
            (host, prefix + r["path"], r["size"], r["mtime"], mode, json.dumps(r))
            for r in records
            if r.get("size") is not None and r.get("mtime") is not None
        ]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?)", rows_)


