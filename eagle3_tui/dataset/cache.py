"""Scan records kept in the user cache (SQLite), keyed by host, path, size, mtime and stamp
(inode and ctime: what a user cannot set back).

A second scan of an unchanged dataset then reads nothing but the listing; a file whose size,
mtime, inode or ctime changed is scanned again. The cache lives in userdirs.cache_dir() (EAGLE3_TUI_CACHE_DIR
overrides it), never in the dataset. A record is reused only when what made it is the same:
the depth (a quick record for the same --rows and --budget; a full record with the same two serves
quick scans too), the
vocabulary mapping its draft_vocab counts came from (its variant) and the code that reads the
files (CODE). Records are stored by absolute path; dataset/stream.py gives them back with paths
relative to the root being scanned, whichever root they were first scanned under.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.scan.options import DEFAULT_BUDGET, ScanOptions
from eagle3_tui.userdirs import cache_dir

if TYPE_CHECKING:
    from eagle3_tui.dataset.shapes import DatasetRecord
    from eagle3_tui.engines.results.findings import Finding
    from eagle3_tui.engines.results.scan import RecordPrint

SCHEMA = 9  # 2: fingerprints from the first and last valid rows (same in quick and full); 3: error column;
#          4: a small sample is read whole in quick mode too (its statistics are of every row);
#          5: variant column (the mapping behind draft_vocab), the code version in the mode;
#          6: records carry "pair" (engines/scan/pairprint.py), what `pair` matches captures on;
#          7: "pair" in a column of its own: ~3 KB a record that only `pair` asks for and reads
#             (a plain scan computes none: options.ScanOptions.pair)
#          8: slots carry norm_bulk and the signature "massive": statistics without the
#             massive-activation rows (engines/scan/rows.py massive_rows; issue 30)
#          9: stamp column (inode and ctime, engines/scan/walk.py file_stamp): size and mtime
#             can be set back by a rewrite and `touch -r`; a record matches only the file it read

#: the modules a record's numbers come from: engines.scan.records and every package module it
#: imports, at any depth (imported_modules); a change to any of them is another code version (a
#: hand-kept list left out the static zip reader, engines/read/torch_zip.py)
_RECORD_ROOT = "engines.scan.records"
#: where the findings come from: dataset.findings and every package module it imports, at any
#: depth (imported_modules): a constant changed in outliers.py is another findings version
_FINDINGS_ROOT = "dataset.findings"


@cache
def code_version(names: tuple[str, ...]) -> str:
    """A digest of the source of the package's modules `names` (the code version in cache keys),
    read from the files: importing them would import torch, which an unchanged dataset's second
    scan never needs."""

    h = hashlib.blake2b(digest_size=8)
    for name in names:
        spec = find_spec(f"eagle3_tui.{name}")
        if spec is None or spec.origin is None:
            raise ModuleNotFoundError(f"eagle3_tui.{name}")
        with open(spec.origin, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


_PACKAGE = Path(__file__).resolve().parents[1]


def _source(name: str) -> Path | None:
    """The file of eagle3_tui module `name` ("dataset.findings"), found on disk: nothing imported."""
    base = _PACKAGE.joinpath(*name.split("."))
    for file in (base.with_suffix(".py"), base / "__init__.py"):
        if file.is_file():
            return file
    return None


#: an import statement at any indentation (`from x import (a, b)` over lines too); one in a
#: docstring counts as well, which only makes the key cover a module more
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)|import[ \t]+([\w., \t]+))", re.M)


@cache
def imported_modules(root: str) -> tuple[str, ...]:
    """`root` and every eagle3_tui module it imports, directly or through another, at module level
    or inside a function (the lazy imports run too), as names below eagle3_tui; read from the
    sources, nothing imported."""
    seen: set[str] = set()
    todo = [root]
    while todo:
        name = todo.pop()
        file = _source(name)
        if name in seen or file is None:
            continue
        seen.add(name)
        for m in _IMPORT.finditer(file.read_bytes()):
            if m[3] is not None:
                found = [n.split()[0] for n in m[3].decode().split(",") if n.strip()]
            else:
                base = m[1].decode()
                names = m[2].decode().strip("()").replace("\\", " ").split(",")
                # `from pkg import mod` imports the module pkg.mod (a name that is no module is skipped)
                found = [base] + [f"{base}.{n.split()[0]}" for n in names if n.split()]
            todo += [f.removeprefix("eagle3_tui.") for f in found if f.startswith("eagle3_tui.")]
    return tuple(sorted(seen))


@cache
def record_code() -> str:
    """The code version of a record: the digest of every module its numbers come from."""
    return code_version(imported_modules(_RECORD_ROOT))


def mode_name(full: bool, rows: int, budget: int = DEFAULT_BUDGET) -> str:
    return f"{ScanOptions(full=full, rows=rows, budget=budget).record_mode()}@{record_code()}"


def record_variant(record: DatasetRecord) -> str | None:
    """What a record depends on beyond its file and depth: "*" for an error (it depends on
    nothing else), else the identity of the mapping behind its draft_vocab counts (None: none)."""
    if "variant" in record:  # a lazy cached record (dataset/stream.py)
        return record["variant"]
    if "error" in record:
        return "*"
    return (record.get("draft_vocab") or {}).get("mapping")


def storable(path: str) -> str:
    """A path as SQLite can hold it: a name that is not UTF-8 (surrogateescape) has its bytes
    written as \\xNN (its records are then cached under that name and read again, never a crash:
    `scan` of such a tree raised UnicodeEncodeError at its end)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return path


def _without_pair(record: DatasetRecord) -> DatasetRecord | dict[str, object]:
    return {k: v for k, v in record.items() if k != "pair"} if "pair" in record else record


class ScanCache:
    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else cache_dir() / "scan.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # check_same_thread=False: the pipeline opens it on the event loop and computes the findings
        # in a worker thread; one user at a time, never two at once
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA:  # an older layout: the records are only a cache, start again
            self._db.execute("DROP TABLE IF EXISTS records")
            self._db.execute("DROP TABLE IF EXISTS findings")
            self._db.execute(f"PRAGMA user_version={SCHEMA}")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS records (host TEXT, path TEXT, size INTEGER, mtime REAL,"
            " mode TEXT, record TEXT, error INTEGER, variant TEXT, pair TEXT, stamp TEXT, PRIMARY KEY (host, path))"
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
        return storable(root.rstrip("/") + "/")

    def known(self, host: str, root: str, full: bool, rows: int, budget: int = DEFAULT_BUDGET,
              pair: bool = False) -> dict[str, tuple[int, float, str, str, bool, str | None, str | None]]:
        """rel path -> (size, mtime, record JSON text, cache mode, is an error record, variant, stamp)
        of usable records under root: one indexed range query, nothing decoded. pair: only
        records that carry the pairing print (or errors, which never do)."""
        cur = self._usable("size, mtime, record, mode, error, variant, stamp", host, root, full, rows, budget,
                           " AND (pair IS NOT NULL OR error)" if pair else "")
        return {row[0]: row[1:] for row in cur}

    def pairs(self, host: str, root: str, full: bool, rows: int,
              budget: int = DEFAULT_BUDGET) -> dict[str, RecordPrint]:
        """rel path -> the "pair" field of the records known() gives (what `pair` matches on)."""
        cur = self._usable("pair", host, root, full, rows, budget, " AND pair IS NOT NULL")
        return {rel: json.loads(text) for rel, text in cur}

    def _usable(self, columns: str, host: str, root: str, full: bool, rows: int, budget: int, more: str = ""):
        """rel path and `columns` of the records under root a scan of this depth may use: one
        indexed range query (`more`: a further condition)."""
        prefix = self._prefix(root)
        wanted = (mode_name(True, rows, budget), mode_name(full, rows, budget))
        return self._db.execute(
            f"SELECT substr(path, ?), {columns} FROM records"
            " WHERE host = ? AND path >= ? AND path < ? AND mode IN (?, ?)" + more,
            (len(prefix) + 1, host, prefix, prefix[:-1] + "0", *wanted),  # "0" is the character after "/"
        )

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

    def put(self, host: str, root: str, records: Iterable[DatasetRecord], full: bool, rows: int,
            budget: int = DEFAULT_BUDGET) -> None:
        prefix = self._prefix(root)
        mode = mode_name(full, rows, budget)
        rows_ = [
            (host, storable(prefix + r["path"]), r["size"], r["mtime"], mode, json.dumps(_without_pair(r)), "error" in r,
             record_variant(r), json.dumps(r["pair"]) if r.get("pair") is not None else None, r.get("stamp"))
            for r in records
            # lost: read next time; refused by a torch below 2.10: read again once a safe torch runs
            if r.get("size") is not None and r.get("mtime") is not None and not r.get("lost")
            and not torch_gate.refused(r.get("error"))
        ]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows_)

    # Findings of the last scan of a folder, keyed by a digest of the records they came from:
    # a second scan of an unchanged dataset then computes nothing (the permutation test alone
    # would import torch, ~1.5 s). One row per (host, root): the newest result wins.

    @staticmethod
    def digest(records: Iterable[DatasetRecord], options: ScanOptions | None = None) -> str:
        """Of what the findings depend on: every record's cache key, depth and variant, the
        options that change a record or a finding, and the code of both."""
        h = hashlib.blake2b(digest_size=16)
        h.update(f"{code_version(imported_modules(_FINDINGS_ROOT))}\0{record_code()}\0".encode())
        h.update((options or ScanOptions()).findings_key().encode("utf-8", "surrogateescape") + b"\n")
        # a lazy cached record (dataset/stream.py) carries path, size, mtime, stamp, mode, error and variant too
        for key in sorted(f"{r.get('path')}\0{r.get('size')}\0{r.get('mtime')}\0{r.get('stamp')}\0{r.get('mode')}\0{'error' in r}"
                          f"\0{record_variant(r)}" for r in records):
            h.update(key.encode("utf-8", "surrogateescape"))
            h.update(b"\n")
        return h.hexdigest()

    def findings(self, host: str, root: str, digest: str) -> list[Finding] | None:
        row = self._db.execute("SELECT digest, findings FROM findings WHERE host = ? AND root = ?",
                               (host, self._prefix(root))).fetchone()
        return json.loads(row[1]) if row is not None and row[0] == digest else None

    def last_findings(self, host: str, root: str) -> list[Finding] | None:
        """The findings of the last scan of `root`, whatever its options (the browser's marks:
        it checks the records themselves against its listing)."""
        row = self._db.execute("SELECT findings FROM findings WHERE host = ? AND root = ?",
                               (host, self._prefix(root))).fetchone()
        return json.loads(row[0]) if row is not None else None

    def put_findings(self, host: str, root: str, digest: str, findings: list[Finding]) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO findings VALUES (?, ?, ?, ?)",
                             (host, self._prefix(root), digest, json.dumps(findings)))
