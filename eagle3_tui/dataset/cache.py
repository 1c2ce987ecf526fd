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

SCHEMA = 4  # 2: fingerprints from the first and last valid rows (same in quick and full); 3: error column;
#          4: a small sample is read whole in quick mode too (its statistics are of every row)


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
            self._db.execute("DROP TABLE IF EXISTS findings")
            self._db.execute(f"PRAGMA user_version={SCHEMA}")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS records (host TEXT, path TEXT, size INTEGER, mtime REAL,"
            " mode TEXT, record TEXT, error INTEGER, PRIMARY KEY (host, path))"
        )
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS findings (host TEXT, root TEXT, digest TEXT, findings TEXT,"
            " PRIMARY KEY (host, root))"
        )
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    @staticmethod
    def _prefix(root: str) -> str:
        return root.rstrip("/") + "/"

    def known(self, host: str, root: str, full: bool, rows: int) -> dict[str, tuple[int, float, str, str, bool]]:
        """rel path -> (size, mtime, record JSON text, cache mode, is an error record) of usable
        records under root: one indexed range query, nothing decoded."""
        prefix = self._prefix(root)
        wanted = ("full", "full") if full else ("full", mode_name(False, rows))
        cur = self._db.execute(
            "SELECT substr(path, ?), size, mtime, record, mode, error FROM records"
            " WHERE host = ? AND path >= ? AND path < ? AND mode IN (?, ?)",
            (len(prefix) + 1, host, prefix, prefix[:-1] + "0", *wanted),  # "0" is the character after "/"
        )
        return {row[0]: row[1:] for row in cur}

    def in_folder(self, host: str, folder: str) -> dict[str, tuple[int, float, str]]:
        """name -> (size, mtime, record JSON text) of the files directly in `folder`, whatever
        scan (root, depth) wrote them: one indexed range query (the browser's marks)."""
        prefix = self._prefix(folder)
        cur = self._db.execute(
            "SELECT substr(path, ?), size, mtime, record FROM records"
            " WHERE host = ? AND path >= ? AND path < ? AND instr(substr(path, ?), '/') = 0",
            (len(prefix) + 1, host, prefix, prefix[:-1] + "0", len(prefix) + 1),
        )
        return {name: (size, mtime, rec) for name, size, mtime, rec in cur}

    def put(self, host: str, root: str, records: list[dict[str, Any]], full: bool, rows: int) -> None:
        prefix = self._prefix(root)
        mode = mode_name(full, rows)
        rows_ = [
            (host, prefix + r["path"], r["size"], r["mtime"], mode, json.dumps(r), "error" in r)
            for r in records
            if r.get("size") is not None and r.get("mtime") is not None
        ]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?, ?)", rows_)



    # Findings of the last scan of a folder, keyed by a digest of the records they came from:
    # a second scan of an unchanged dataset then computes nothing (the permutation test alone
    # would import torch, ~1.5 s). One row per (host, root): the newest result wins.

    @staticmethod
    def digest(records: list[dict[str, Any]]) -> str:
        """Of what the findings depend on: every record's cache key and depth, and the code."""
        import hashlib

        from eagle3_tui.samples import dataset_findings, layer_group

        h = hashlib.blake2b(digest_size=16)
        for module in (dataset_findings, layer_group):
            with open(module.__file__, "rb") as fh:
                h.update(fh.read())
        # a lazy cached record (dataset/scan.py) carries path, size, mtime, mode and error too
        for key in sorted(f"{r.get('path')}\0{r.get('size')}\0{r.get('mtime')}\0{r.get('mode')}\0{'error' in r}" for r in records):
            h.update(key.encode("utf-8", "surrogateescape"))
            h.update(b"\n")
        return h.hexdigest()

    def findings(self, host: str, root: str, digest: str) -> list[dict[str, Any]] | None:
        row = self._db.execute("SELECT digest, findings FROM findings WHERE host = ? AND root = ?",
                               (host, self._prefix(root))).fetchone()
        return json.loads(row[1]) if row is not None and row[0] == digest else None

    def put_findings(self, host: str, root: str, digest: str, findings: list[dict[str, Any]]) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO findings VALUES (?, ?, ?, ?)",
                             (host, self._prefix(root), digest, json.dumps(findings)))
