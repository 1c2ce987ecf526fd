"""The bookmark store: one SQLite file in the user data folder, shared by every eagle3-tui process.

Safety rules, in order of importance:
- Never lose a committed bookmark: WAL with synchronous=FULL; every change is one
  BEGIN IMMEDIATE transaction, so two processes that read-modify-write the same bookmark
  serialise instead of overwriting each other.
- Never touch a file we do not understand: a file that is not SQLite, is damaged, belongs to
  something else or has a newer schema is inspected through a read-only connection (which
  cannot checkpoint or repair anything) and refused with one line; it is not written,
  renamed or "repaired".
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from eagle3_tui.bookmarks.headline import headline_text
from eagle3_tui.bookmarks.keys import TargetError, TargetParts, split_target

SCHEMA_VERSION = 1
FILE_NAME = "bookmarks.sqlite3"
BUSY_TIMEOUT_S = 10.0
_SQLITE_MAGIC = b"SQLite format 3\x00"
_TAG_FORBIDDEN = set(" \t\r\n\v\f,;#")

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


class BookmarkError(Exception):
    """Anything the user must be told about bookmarks. str() is one line."""


class BookmarkStoreRefused(BookmarkError):
    """The database file is damaged, foreign or newer; it was left exactly as it was."""


@dataclass(frozen=True)
class Bookmark:
    target: str
    host: str | None
    user: str | None
    port: int | None
    path: str
    note: str = ""
    tags: tuple[str, ...] = ()
    created: float = 0.0
    updated: float = 0.0
    headline: dict[str, Any] | None = field(default=None, compare=False, hash=False)

    @property
    def headline_text(self) -> str:
        return headline_text(self.headline)

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "host": self.host,
            "user": self.user,
            "port": self.port,
            "path": self.path,
            "note": self.note,
            "tags": list(self.tags),
            "created": iso_time(self.created),
            "updated": iso_time(self.updated),
            "headline": self.headline,
        }

    def matches(self, filter_text: str | None) -> bool:
        """Every word of filter_text occurs (case-insensitive) in target, note, #tags or headline."""
        if not filter_text:
            return True
        hay = " ".join(
            [self.target, self.note, " ".join("#" + t for t in self.tags), self.headline_text]
        ).casefold()
        return all(word in hay for word in filter_text.casefold().split())


def iso_time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")


def store_path(data_dir: str | Path | None = None) -> Path:
    """Where the store lives: DATA_DIR/bookmarks.sqlite3 (default: userdirs.data_dir())."""
    if data_dir is None:
        from eagle3_tui.userdirs import data_dir as default_data_dir

        data_dir = default_data_dir()
    return Path(data_dir) / FILE_NAME


def open_store(data_dir: str | Path | None = None) -> BookmarkStore:
    """Open (creating if needed) the store; the TUI and CLI pass their --data-dir here."""
    return BookmarkStore(store_path(data_dir))


def clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags are single words (no spaces, commas, semicolons or #), kept in first-seen order."""
    out: list[str] = []
    for tag in tags:
        tag = str(tag).strip()
        if not tag:
            continue
        if set(tag) & _TAG_FORBIDDEN:
            raise BookmarkError(f"bad tag {tag!r}: a tag is one word without spaces, ',', ';' or '#'")
        if tag not in out:
            out.append(tag)
    return tuple(out)


class BookmarkStore:
    """Bookmarks keyed by target. Safe to share between threads; every call is short."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._keys: frozenset[str] | None = None
        self._keys_version: int | None = None  # PRAGMA data_version when _keys was read
        self._seen_version: int | None = None  # ... when changed_elsewhere() last looked
        self._inspect()
        self._conn = self._open_rw()
        self.changed_elsewhere()  # start watching from now

    # ---- opening -------------------------------------------------------------------------

    def _refuse(self, why: str, hint: str = "move it aside to start a new bookmark store") -> BookmarkStoreRefused:
        return BookmarkStoreRefused(f"{self.path}: {why}; the file was left untouched ({hint})")

    def _inspect(self) -> None:
        """Check an existing file without any chance of writing to it."""
        try:
            with open(self.path, "rb") as f:
                head = f.read(len(_SQLITE_MAGIC))
        except FileNotFoundError:
            return
        except IsADirectoryError:
            raise BookmarkError(f"{self.path}: is a folder, not a bookmark store") from None
        except OSError as e:
            raise BookmarkError(f"{self.path}: cannot read bookmark store: {e.strerror or e}") from None
        if not head:
            return  # an empty file holds nothing to lose; SQLite initialises it
        if head != _SQLITE_MAGIC:
            raise self._refuse("not a bookmark store (not an SQLite database)")
        try:
            conn = sqlite3.connect(
                f"{self.path.absolute().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S
            )
        except sqlite3.Error:
            return  # cannot inspect read-only (e.g. hot rollback journal); _open_rw checks again
        try:
            self._check(conn, quick_check=True)
        except sqlite3.DatabaseError as e:
            if _is_corruption(e):
                raise self._refuse(f"damaged bookmark store ({_one_line(e)})") from None
            # other problems (busy, missing -shm we may not create) are handled by _open_rw
        finally:
            conn.close()

    def _check(self, conn: sqlite3.Connection, *, quick_check: bool) -> int:
        # One read transaction: read separately, another process's schema creation could land
        # between the two reads and make a new store look like someone else's database.
        if conn.in_transaction:
            return self._check_in_transaction(conn, quick_check=quick_check)
        conn.execute("BEGIN")
        try:
            return self._check_in_transaction(conn, quick_check=quick_check)
        finally:
            conn.execute("ROLLBACK")

    def _check_in_transaction(self, conn: sqlite3.Connection, *, quick_check: bool) -> int:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise self._refuse(
                f"bookmark store has schema version {version}, newer than this eagle3-tui "
                f"understands ({SCHEMA_VERSION})",
                hint="upgrade eagle3-tui to use it",
            )
        if version == 0:
            tables = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
            ).fetchone()[0]
            if tables:
                raise self._refuse("an SQLite database that is not an eagle3-tui bookmark store")
        if quick_check:
            problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise self._refuse(f"damaged bookmark store ({_one_line(problems[0])})")
        return version

    def _open_rw(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise BookmarkError(f"{self.path.parent}: cannot create folder: {e.strerror or e}") from None
        try:
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as e:
            raise BookmarkError(f"{self.path}: cannot open bookmark store: {_one_line(e)}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            version = self._check(conn, quick_check=False)  # again: the file may be new since
            if version == 0:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() != "wal":
                    raise BookmarkError(f"{self.path}: cannot switch the bookmark store to WAL ({mode})")
            conn.execute("PRAGMA synchronous = FULL")
            if version < SCHEMA_VERSION:
                self._migrate(conn)
        except sqlite3.DatabaseError as e:
            conn.close()
            if _is_corruption(e):
                raise self._refuse(f"damaged bookmark store ({_one_line(e)})") from None
            raise BookmarkError(f"{self.path}: cannot open bookmark store: {_one_line(e)}") from None
        except BaseException:
            conn.close()
            raise
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have created the schema while we waited for the lock.
            version = self._check(conn, quick_check=False)
            for step in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[step]:
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # ---- plumbing ------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None  # type: ignore[assignment]

    def __enter__(self) -> BookmarkStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise BookmarkError(f"{self.path}: bookmark store is closed")
        return self._conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One transaction that holds the write lock from its first read (no lost updates)."""
        with self._lock, self._errors("cannot save bookmark"):
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            self._keys = None

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._errors("cannot read bookmarks"):
            yield self._connection()

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as e:
            if _is_corruption(e):
                raise BookmarkError(f"{self.path}: bookmark store is damaged ({_one_line(e)})") from None
            if getattr(e, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED"):
                raise BookmarkError(
                    f"{self.path}: {doing}: another eagle3-tui held the store for "
                    f"{BUSY_TIMEOUT_S:.0f} s; try again"
                ) from None
            raise BookmarkError(f"{self.path}: {doing}: {_one_line(e)}") from None

    # ---- reading -------------------------------------------------------------------------

    def get(self, target: str) -> Bookmark | None:
        key = _parts(target).key
        with self._read() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM bookmarks WHERE target = ?", (key,)).fetchone()
        return _bookmark(row) if row else None

    def list(
        self, filter_text: str | None = None, *, tag: str | None = None, host: str | None = None
    ) -> list[Bookmark]:
        """Bookmarks in the order they were made. host="local" keeps local files only."""
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM bookmarks ORDER BY created, target").fetchall()
        out = [_bookmark(row) for row in rows]
        if tag is not None:
            out = [b for b in out if tag in b.tags]
        if host is not None:
            out = [b for b in out if (b.host or "local") == host]
        return [b for b in out if b.matches(filter_text)]

    def keys(self) -> frozenset[str]:
        """All bookmarked keys, for the browser's marker. Cheap when nothing changed."""
        with self._read() as conn:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            if self._keys is None or version != self._keys_version:
                self._keys = frozenset(r[0] for r in conn.execute("SELECT target FROM bookmarks"))
                self._keys_version = version
            return self._keys

    def is_bookmarked(self, target: str) -> bool:
        return _parts(target).key in self.keys()

    def changed_elsewhere(self) -> bool:
        """Whether another process committed a change since the last call (or since opening).

        The UI polls this cheaply (PRAGMA data_version) to refresh its markers and lists.
        """
        with self._read() as conn:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
        changed, self._seen_version = version != self._seen_version, version
        return changed

    def export(self, fmt: str, bookmarks: list[Bookmark] | None = None) -> str:
        from eagle3_tui.bookmarks.export import export

        return export(self.list() if bookmarks is None else bookmarks, fmt)

    # ---- writing -------------------------------------------------------------------------

    def add(
        self,
        target: str,
        *,
        note: str | None = None,
        tags: Iterable[str] = (),
        headline: dict[str, Any] | None = None,
    ) -> Bookmark:
        """Bookmark target, or update it: note and headline replaced when given, tags merged."""
        return self.add_many([target], note=note, tags=tags, headline=headline)[0]

    def add_many(
        self,
        targets: Iterable[str],
        *,
        note: str | None = None,
        tags: Iterable[str] = (),
        headline: dict[str, Any] | None = None,
        headlines: Mapping[str, dict[str, Any]] | None = None,
    ) -> list[Bookmark]:
        """add() for a batch, in one transaction: all of them are saved or none.

        headlines gives a target (as written in targets) its own headline instead of headline.
        """
        targets = list(targets)
        parts = [_parts(t) for t in targets]
        tags = clean_tags(tags)
        default = _headline_json(headline)
        per_target = {t: _headline_json(h) for t, h in (headlines or {}).items()}
        with self._write() as conn:
            return [
                self._upsert(conn, p, note=note, add_tags=tags, headline_json=per_target.get(t, default))
                for t, p in zip(targets, parts)
            ]

    def toggle(self, target: str, headline: dict[str, Any] | None = None) -> bool:
        """Bookmark target if it is not, else remove it. Returns whether it is bookmarked now."""
        p = _parts(target)
        headline_json = _headline_json(headline)
        with self._write() as conn:
            if conn.execute("DELETE FROM bookmarks WHERE target = ?", (p.key,)).rowcount:
                return False
            self._upsert(conn, p, headline_json=headline_json)
            return True

    def set_note(self, target: str, note: str, *, headline: dict[str, Any] | None = None) -> Bookmark:
        """Replace the note, bookmarking target first if needed."""
        p = _parts(target)
        headline_json = _headline_json(headline)
        with self._write() as conn:
            return self._upsert(conn, p, note=str(note), headline_json=headline_json)

    def set_tags(
        self, target: str, tags: Iterable[str], *, headline: dict[str, Any] | None = None
    ) -> Bookmark:
        """Replace the tags, bookmarking target first if needed."""
        p = _parts(target)
        tags = clean_tags(tags)
        headline_json = _headline_json(headline)
        with self._write() as conn:
            return self._upsert(conn, p, set_tags=tags, headline_json=headline_json)

    def fill_headline(self, target: str, headline: dict[str, Any]) -> bool:
        """Give a bookmark made before its sample was loaded its headline; True if it had none."""
        key, headline_json = _parts(target).key, _headline_json(headline)
        with self._write() as conn:
            return bool(
                conn.execute(
                    "UPDATE bookmarks SET headline = ? WHERE target = ? AND headline IS NULL",
                    (headline_json, key),
                ).rowcount
            )

    def remove(self, target: str) -> bool:
        """Remove one bookmark. Returns False when it was not bookmarked."""
        return not self.remove_many([target])

    def remove_many(self, targets: Iterable[str]) -> list[str]:
        """Remove bookmarks in one transaction; returns the keys that were not bookmarked."""
        keys = [_parts(t).key for t in targets]
        with self._write() as conn:
            return [
                k for k in keys if not conn.execute("DELETE FROM bookmarks WHERE target = ?", (k,)).rowcount
            ]

    def _upsert(
        self,
        conn: sqlite3.Connection,
        p: TargetParts,
        *,
        note: str | None = None,
        add_tags: tuple[str, ...] = (),
        set_tags: tuple[str, ...] | None = None,
        headline_json: str | None = None,
    ) -> Bookmark:
        key, now = p.key, time.time()
        row = conn.execute(f"SELECT {_COLUMNS} FROM bookmarks WHERE target = ?", (key,)).fetchone()
        if row is None:
            tags = set_tags if set_tags is not None else add_tags
            conn.execute(
                f"INSERT INTO bookmarks ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (key, p.host, p.user, p.port, p.path, note or "", json.dumps(list(tags)),
                 headline_json, now, now),
            )
        else:
            old = _bookmark(row)
            tags = set_tags if set_tags is not None else clean_tags([*old.tags, *add_tags])
            new_note = old.note if note is None else note
            new_headline = row[7] if headline_json is None else headline_json
            if (new_note, tags, new_headline) != (old.note, old.tags, row[7]):
                conn.execute(
                    "UPDATE bookmarks SET note = ?, tags = ?, headline = ?, updated = ? WHERE target = ?",
                    (new_note, json.dumps(list(tags)), new_headline, now, key),
                )
        row = conn.execute(f"SELECT {_COLUMNS} FROM bookmarks WHERE target = ?", (key,)).fetchone()
        return _bookmark(row)


_COLUMNS = "target, host, user, port, path, note, tags, headline, created, updated"


def _bookmark(row: tuple) -> Bookmark:
    target, host, user, port, path, note, tags, headline, created, updated = row
    return Bookmark(
        target=target,
        host=host,
        user=user,
        port=port,
        path=path,
        note=note,
        tags=tuple(json.loads(tags)),
        created=created,
        updated=updated,
        headline=json.loads(headline) if headline else None,
    )


def _parts(target: str) -> TargetParts:
    try:
        return split_target(target)
    except TargetError as e:
        raise BookmarkError(str(e)) from None


def _headline_json(headline: dict[str, Any] | None) -> str | None:
    if headline is None:
        return None
    try:
        return json.dumps(headline, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as e:
        raise BookmarkError(f"headline is not plain JSON: {e}") from None


def _is_corruption(e: sqlite3.DatabaseError) -> bool:
    name = getattr(e, "sqlite_errorname", "")
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return True
    text = str(e)
    return "malformed" in text or "not a database" in text


def _one_line(e: object) -> str:
    text = " ".join(str(e).split())
    return text or type(e).__name__
