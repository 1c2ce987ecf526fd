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

import builtins
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from eagle3_tui.bookmarks.headline import Headline
from eagle3_tui.bookmarks.model import Bookmark, BookmarkError, clean_tags
from eagle3_tui.bookmarks.sqlite_file import BUSY_TIMEOUT_S, inspect, is_corruption, one_line, open_rw
from eagle3_tui.target import Target, TargetError, parse_target
from eagle3_tui.userdirs import data_dir as default_data_dir

FILE_NAME = "bookmarks.sqlite3"


def store_path(data_dir: str | Path | None = None) -> Path:
    """Where the store lives: DATA_DIR/bookmarks.sqlite3 (default: userdirs.data_dir())."""
    if data_dir is None:
        data_dir = default_data_dir()
    return Path(data_dir) / FILE_NAME


def open_store(data_dir: str | Path | None = None) -> BookmarkStore:
    """Open (creating if needed) the store; the TUI and CLI pass their --data-dir here."""
    return BookmarkStore(store_path(data_dir))


class BookmarkStore:
    """Bookmarks keyed by target. Safe to share between threads; every call is short."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._keys: frozenset[str] | None = None
        self._keys_version: int | None = None  # PRAGMA data_version when _keys was read
        self._seen_version: int | None = None  # ... when changed_elsewhere() last looked
        inspect(self.path)
        self._conn = open_rw(self.path)
        self.changed_elsewhere()  # start watching from now

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
            if is_corruption(e):
                raise BookmarkError(f"{self.path}: bookmark store is damaged ({one_line(e)})") from None
            if getattr(e, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED"):
                raise BookmarkError(
                    f"{self.path}: {doing}: another eagle3-tui held the store for "
                    f"{BUSY_TIMEOUT_S:.0f} s; try again"
                ) from None
            raise BookmarkError(f"{self.path}: {doing}: {one_line(e)}") from None

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

    # ---- writing -------------------------------------------------------------------------

    def add(
        self,
        target: str,
        *,
        note: str | None = None,
        tags: Iterable[str] = (),
        headline: Headline | None = None,
    ) -> Bookmark:
        """Bookmark target, or update it: note and headline replaced when given, tags merged."""
        return self.add_many([target], note=note, tags=tags, headline=headline)[0]

    def add_many(
        self,
        targets: Iterable[str],
        *,
        note: str | None = None,
        tags: Iterable[str] = (),
        headline: Headline | None = None,
        headlines: Mapping[str, Headline] | None = None,
    ) -> builtins.list[Bookmark]:
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
                for t, p in zip(targets, parts, strict=True)
            ]

    def toggle(self, target: str, headline: Headline | None = None) -> bool:
        """Bookmark target if it is not, else remove it. Returns whether it is bookmarked now."""
        p = _parts(target)
        headline_json = _headline_json(headline)
        with self._write() as conn:
            if conn.execute("DELETE FROM bookmarks WHERE target = ?", (p.key,)).rowcount:
                return False
            self._upsert(conn, p, headline_json=headline_json)
            return True

    def set_note(self, target: str, note: str, *, headline: Headline | None = None) -> Bookmark:
        """Replace the note, bookmarking target first if needed."""
        p = _parts(target)
        headline_json = _headline_json(headline)
        with self._write() as conn:
            return self._upsert(conn, p, note=str(note), headline_json=headline_json)

    def set_tags(
        self, target: str, tags: Iterable[str], *, headline: Headline | None = None
    ) -> Bookmark:
        """Replace the tags, bookmarking target first if needed."""
        p = _parts(target)
        tags = clean_tags(tags)
        headline_json = _headline_json(headline)
        with self._write() as conn:
            return self._upsert(conn, p, set_tags=tags, headline_json=headline_json)

    def fill_headline(self, target: str, headline: Headline) -> bool:
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

    def remove_many(self, targets: Iterable[str]) -> builtins.list[str]:
        """Remove bookmarks in one transaction; returns the keys that were not bookmarked."""
        keys = [_parts(t).key for t in targets]
        with self._write() as conn:
            return [
                k for k in keys if not conn.execute("DELETE FROM bookmarks WHERE target = ?", (k,)).rowcount
            ]

    def _upsert(
        self,
        conn: sqlite3.Connection,
        p: Target,
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


def _parts(target: str) -> Target:
    try:
        return parse_target(target).canonical()
    except TargetError as e:
        raise BookmarkError(str(e)) from None


def _headline_json(headline: Headline | None) -> str | None:
    if headline is None:
        return None
    try:
        return json.dumps(headline, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as e:
        raise BookmarkError(f"headline is not plain JSON: {e}") from None
