"""Opening the bookmark file safely: inspect an existing file read-only, refuse what we do not
understand (not SQLite, damaged, foreign, newer), then open it for writing and migrate.

A refused file is never written, renamed or "repaired": the read-only inspection cannot
checkpoint anything, and only a file that passed it is opened read-write.
"""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path

from eagle3_tui.bookmarks.model import BookmarkError, BookmarkStoreRefused

SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 10.0
_SQLITE_MAGIC = b"SQLite format 3\x00"

# One list of statements per version step; executescript() would commit the open transaction.
_MIGRATIONS: dict[int, list[str]] = {
    1: [
        """
CREATE TABLE bookmarks (
    target   TEXT PRIMARY KEY,         -- canonical key, itself a valid target text
    host     TEXT,                     -- NULL for a local file
    user     TEXT,
    port     INTEGER,
    path     TEXT NOT NULL,
    note     TEXT NOT NULL DEFAULT '',
    tags     TEXT NOT NULL DEFAULT '[]',  -- JSON list of strings
    headline TEXT,                     -- JSON object or NULL
    created  REAL NOT NULL,            -- unix seconds
    updated  REAL NOT NULL
)""",
        "CREATE INDEX bookmarks_created ON bookmarks (created)",
    ],
}


def _refuse(path: Path, why: str, hint: str = "move it aside to start a new bookmark store") -> BookmarkStoreRefused:
    return BookmarkStoreRefused(f"{path}: {why}; the file was left untouched ({hint})")


def inspect(path: Path) -> None:
    """Check an existing file without any chance of writing to it."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except IsADirectoryError:
        raise BookmarkError(f"{path}: is a folder, not a bookmark store") from None
    except OSError as e:
        raise BookmarkError(f"{path}: cannot read bookmark store: {e.strerror or e}") from None
    if not head:
        return  # an empty file holds nothing to lose; SQLite initialises it
    if head != _SQLITE_MAGIC:
        raise _refuse(path, "not a bookmark store (not an SQLite database)")
    try:
        conn = sqlite3.connect(
            f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S
        )
    except sqlite3.Error:
        return  # cannot inspect read-only (e.g. hot rollback journal); _open_rw checks again
    try:
        _check(path, conn, quick_check=True)
    except sqlite3.DatabaseError as e:
        if is_corruption(e):
            raise _refuse(path, f"damaged bookmark store ({one_line(e)})") from None
        # other problems (busy, missing -shm we may not create) are handled by _open_rw
    finally:
        conn.close()


def _check(path: Path, conn: sqlite3.Connection, *, quick_check: bool) -> int:
    # One read transaction: read separately, another process's schema creation could land
    # between the two reads and make a new store look like someone else's database.
    if conn.in_transaction:
        return _check_in_transaction(path, conn, quick_check=quick_check)
    conn.execute("BEGIN")
    try:
        return _check_in_transaction(path, conn, quick_check=quick_check)
    finally:
        conn.execute("ROLLBACK")


def _check_in_transaction(path: Path, conn: sqlite3.Connection, *, quick_check: bool) -> int:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise _refuse(path, 
            f"bookmark store has schema version {version}, newer than this eagle3-tui "
            f"understands ({SCHEMA_VERSION})",
            hint="upgrade eagle3-tui to use it",
        )
    if version == 0:
        tables = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchone()[0]
        if tables:
            raise _refuse(path, "an SQLite database that is not an eagle3-tui bookmark store")
    if quick_check:
        problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise _refuse(path, f"damaged bookmark store ({one_line(problems[0])})")
    return version


class _Contended(Exception):
    """Another process held the file while this one was opening it."""


def open_rw(path: Path) -> sqlite3.Connection:
    """Open (creating and migrating if needed) for reading and writing. Two processes opening a
    new store at once can make SQLite answer "database is locked" at once, without waiting (it
    does so when waiting could deadlock, e.g. both hold a read lock and one switches to WAL):
    opening is idempotent, so it is tried again, with a short random back-off, for up to
    BUSY_TIMEOUT_S."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BookmarkError(f"{path.parent}: cannot create folder: {e.strerror or e}") from None
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.01
    while True:
        try:
            return _open_rw_once(path)
        except _Contended as e:
            if time.monotonic() >= deadline:
                raise BookmarkError(f"{path}: cannot open bookmark store: {e}; another eagle3-tui held it "
                                    f"for {BUSY_TIMEOUT_S:.0f} s, try again") from None
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 0.2)


def _open_rw_once(path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as e:
        raise BookmarkError(f"{path}: cannot open bookmark store: {one_line(e)}") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        version = _check(path, conn, quick_check=False)  # again: the file may be new since
        if version == 0:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise BookmarkError(f"{path}: cannot switch the bookmark store to WAL ({mode})")
        conn.execute("PRAGMA synchronous = FULL")
        if version < SCHEMA_VERSION:
            _migrate(path, conn)
    except sqlite3.DatabaseError as e:
        conn.close()
        if is_corruption(e):
            raise _refuse(path, f"damaged bookmark store ({one_line(e)})") from None
        if _is_busy(e):
            raise _Contended(one_line(e)) from None
        raise BookmarkError(f"{path}: cannot open bookmark store: {one_line(e)}") from None
    except BaseException:
        conn.close()
        raise
    return conn


def _is_busy(e: sqlite3.DatabaseError) -> bool:
    name = getattr(e, "sqlite_errorname", "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in str(e)


def _migrate(path: Path, conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have created the schema while we waited for the lock.
        version = _check(path, conn, quick_check=False)
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in _MIGRATIONS[step]:
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def is_corruption(e: sqlite3.DatabaseError) -> bool:
    name = getattr(e, "sqlite_errorname", "")
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return True
    text = str(e)
    return "malformed" in text or "not a database" in text


def one_line(e: object) -> str:
    text = " ".join(str(e).split())
    return text or type(e).__name__
