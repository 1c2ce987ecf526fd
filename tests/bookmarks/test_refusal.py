"""A store file we do not understand is refused with one line and left byte-for-byte as it was."""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path

import pytest

from eagle3_tui.bookmarks import SCHEMA_VERSION, BookmarkError, BookmarkStoreRefused, open_store


def _filled_store(data_dir: Path, n: int = 300) -> Path:
    with open_store(data_dir) as s:
        s.add_many([f"gpu:/data/rows_{i}/data_{i}.ckpt" for i in range(n)], note="x" * 200, tags=["t"])
    path = data_dir / "bookmarks.sqlite3"
    assert not Path(str(path) + "-wal").exists()  # closing checkpointed everything into the file
    return path


def _not_sqlite(path: Path) -> None:
    path.write_bytes(random.Random(1).randbytes(8192))


def _text(path: Path) -> None:
    path.write_text("bookmarks:\n  - /data/a.pt\n")


def _garbage_pages(path: Path) -> None:
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page * 2 :] = random.Random(2).randbytes(len(data) - page * 2)  # keep page 1 (the schema)
    path.write_bytes(bytes(data))


def _truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _foreign_db(path: Path) -> None:
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE photos (name TEXT)")
    raw.commit()
    raw.close()


def _newer(path: Path) -> None:
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.commit()
    raw.close()


@pytest.mark.parametrize(
    "damage, why",
    [
        (_not_sqlite, "not an SQLite database"),
        (_text, "not an SQLite database"),
        (_garbage_pages, "damaged"),
        (_truncated, "damaged"),
        (_foreign_db, "not an eagle3-tui bookmark store"),
        (_newer, f"schema version {SCHEMA_VERSION + 1}, newer"),
    ],
)
def test_unusable_store_is_refused_and_left_untouched(data_dir, damage, why):
    path = _filled_store(data_dir) if damage in (_garbage_pages, _truncated, _newer) else data_dir / "bookmarks.sqlite3"
    data_dir.mkdir(exist_ok=True)
    damage(path)
    before, files_before = path.read_bytes(), sorted(os.listdir(data_dir))

    for _ in range(2):  # refusing twice: nothing was "repaired" the first time
        with pytest.raises(BookmarkStoreRefused) as e:
            open_store(data_dir)
        message = str(e.value)
        assert why in message and str(path) in message and "left untouched" in message
        assert "\n" not in message

    assert path.read_bytes() == before
    if damage in (_not_sqlite, _text):
        assert sorted(os.listdir(data_dir)) == files_before  # not even a -wal/-shm beside it


def test_refused_store_is_reported_by_the_cli_in_one_line(data_dir, cli):
    path = _filled_store(data_dir)
    _garbage_pages(path)
    before = path.read_bytes()
    for args in (["list"], ["add", "--force", "/d/new.pt"], ["remove", "gpu:/data/rows_1/data_1.ckpt"], ["export"]):
        r = cli(*args)
        assert r.returncode == 1, (args, r.stderr)
        assert r.stdout == ""
        assert len(r.stderr.splitlines()) == 1 and "damaged" in r.stderr and "Traceback" not in r.stderr
    assert path.read_bytes() == before


def test_an_empty_file_becomes_a_new_store(data_dir):
    data_dir.mkdir()
    (data_dir / "bookmarks.sqlite3").write_bytes(b"")
    with open_store(data_dir) as s:
        s.add("/d/a.pt")
    with open_store(data_dir) as s:
        assert s.is_bookmarked("/d/a.pt")


def test_a_folder_where_the_store_should_be_is_a_clear_error(data_dir):
    (data_dir / "bookmarks.sqlite3").mkdir(parents=True)
    with pytest.raises(BookmarkError, match="folder"):
        open_store(data_dir)
