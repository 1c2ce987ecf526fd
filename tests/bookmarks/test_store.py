"""Create, read, update, delete, list and filter bookmarks in a real SQLite file."""

from __future__ import annotations

import sqlite3

import pytest

from eagle3_tui.target import Target

from eagle3_tui.bookmarks import (
    SCHEMA_VERSION,
    BookmarkError,
    headline_from_summary,
    headline_text,
    open_store,
    store_path,
)

HEADLINE = {"schema": "SpecForge offline", "tokens": 16, "slots": [{"label": "aux0", "norm_mean": 5.5}]}


def test_store_lives_in_the_data_dir_and_is_versioned_wal(store, data_dir):
    store.add("gpu:/d/a.pt")
    path = data_dir / "bookmarks.sqlite3"
    assert store.path == path == store_path(data_dir)
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def test_default_location_follows_EAGLE3_TUI_DATA_DIR(tmp_path, monkeypatch):
    monkeypatch.setenv("EAGLE3_TUI_DATA_DIR", str(tmp_path / "env-data"))
    with open_store() as s:
        s.add("/x.pt")
    assert (tmp_path / "env-data" / "bookmarks.sqlite3").is_file()


def test_create_read_update_delete(store):
    assert store.get("gpu:/d/a.pt") is None
    b = store.add("gpu:/d/a.pt", note="layer off by one?", tags=["shift"], headline=HEADLINE)
    assert (b.target, b.host, b.path, b.note, b.tags) == ("gpu:/d/a.pt", "gpu", "/d/a.pt", "layer off by one?", ("shift",))
    assert b.created == b.updated and b.headline == HEADLINE

    got = store.get("ssh://gpu/d/a.pt")  # another spelling of the same file
    assert got == b and got.headline == HEADLINE

    edited = store.set_note("gpu:/d/a.pt", "pre-norm vs post-norm")
    assert edited.note == "pre-norm vs post-norm" and edited.updated > b.updated
    assert edited.created == b.created and edited.tags == ("shift",) and edited.headline == HEADLINE

    assert store.set_tags("gpu:/d/a.pt", ["norm", "suspect", "norm"]).tags == ("norm", "suspect")
    assert store.add("gpu:/d/a.pt", tags=["later"]).tags == ("norm", "suspect", "later")  # add merges
    assert store.get("gpu:/d/a.pt").note == "pre-norm vs post-norm"  # add without --note keeps it

    assert store.remove("gpu:/d/a.pt") is True
    assert store.get("gpu:/d/a.pt") is None
    assert store.remove("gpu:/d/a.pt") is False


def test_changes_survive_reopening(data_dir):
    with open_store(data_dir) as s:
        s.add("/a.pt", note="n", tags=["t"], headline=HEADLINE)
    with open_store(data_dir) as s:
        b = s.get("/a.pt")
    assert (b.note, b.tags, b.headline) == ("n", ("t",), HEADLINE)


def test_toggle_bookmarks_then_unbookmarks(store):
    key = Target("gpu", None, None, "/d/rows_0-2000/data_3.ckpt").key
    assert store.toggle(key, headline=HEADLINE) is True
    assert store.is_bookmarked(key) and store.get(key).headline == HEADLINE
    assert store.toggle(key) is False
    assert not store.is_bookmarked(key) and store.get(key) is None


def test_note_on_an_unbookmarked_sample_bookmarks_it(store):
    b = store.set_note("/d/x.pt", "why is slot 2 so large", headline=HEADLINE)
    assert store.is_bookmarked("/d/x.pt") and b.headline == HEADLINE


def test_local_and_remote_bookmarks_of_one_path_live_side_by_side(store):
    store.add("/data/a.pt", note="local")
    store.add("gpu:/data/a.pt", note="remote")
    assert {b.note for b in store.list()} == {"local", "remote"}
    assert [b.note for b in store.list(host="local")] == ["local"]
    assert [b.note for b in store.list(host="gpu")] == ["remote"]


def test_list_keeps_creation_order_and_filters_on_every_field(store):
    store.add("/d/a.pt", note="NaN in slot 1", tags=["nan"])
    store.add("gpu:/d/b.pt", headline=HEADLINE)
    store.add("/d/c.pt", tags=["shift", "nan"])
    store.add("/d/a.pt", note="NaN in slot 1 and 2")  # an update keeps its place
    assert [b.path for b in store.list()] == ["/d/a.pt", "/d/b.pt", "/d/c.pt"]
    assert [b.path for b in store.list("nan")] == ["/d/a.pt", "/d/c.pt"]  # note or tag, any case
    assert [b.path for b in store.list("#shift")] == ["/d/c.pt"]
    assert [b.path for b in store.list("specforge gpu")] == ["/d/b.pt"]  # every word, headline too
    assert [b.path for b in store.list(tag="nan")] == ["/d/a.pt", "/d/c.pt"]
    assert store.list("nothing-matches") == []


def test_marker_keys_follow_own_and_other_processes_writes(store, data_dir):
    store.add("/d/a.pt")
    assert store.keys() == {"/d/a.pt"}
    with open_store(data_dir) as other:  # a second app instance
        other.add("gpu:/d/b.pt")
        other.remove("/d/a.pt")
    assert store.changed_elsewhere() is True
    assert store.keys() == {"gpu:/d/b.pt"}
    assert store.changed_elsewhere() is False
    assert store.is_bookmarked("ssh://gpu/d/b.pt")


def test_batch_add_is_all_or_nothing(store):
    with pytest.raises(BookmarkError):
        store.add_many(["/d/a.pt", "ssh://gpu:0/bad"])
    assert store.list() == []


@pytest.mark.parametrize("tag", ["two words", "a,b", "a;b", "#x"])
def test_tags_are_single_words(store, tag):
    with pytest.raises(BookmarkError, match="bad tag"):
        store.add("/d/a.pt", tags=[tag])
    assert store.get("/d/a.pt") is None


def test_headline_from_a_real_summary(tmp_path):
    torch = pytest.importorskip("torch")
    from eagle3_tui.engines.read.stats import summarize_file

    T, H = 16, 32
    aux = torch.randn(1, T, 3 * H)
    aux[0, 2, 5] = float("nan")
    path = tmp_path / "data_0.ckpt"
    torch.save({"input_ids": torch.arange(T), "aux_hidden_state": aux, "hidden_state": torch.randn(1, T, H)}, path)
    summary = summarize_file(str(path), k=2)
    h = headline_from_summary(summary)
    assert (h["schema"], h["tokens"], h["hidden"]) == (summary["schema"], T, H)
    assert [s["norm_mean"] for s in h["slots"]] == [s["norm_mean"] for s in summary["slots"]]
    assert h["nonfinite"] == 1
    text = headline_text(h)
    assert f"T={T}" in text and "NaN/Inf 1" in text

    with open_store(tmp_path / "data") as s:
        assert s.add(str(path), headline=h).headline == h


def test_headline_of_a_file_that_failed_to_load_keeps_the_error():
    h = headline_from_summary({"path": "/x.pt", "error": "truncated zip archive"})
    assert h == {"error": "truncated zip archive", "not_sample": False}
    assert headline_text(h) == "error: truncated zip archive"


def test_a_headline_that_is_not_json_is_refused(store):
    with pytest.raises(BookmarkError, match="headline"):
        store.add("/d/a.pt", headline={"x": float("nan")})
    assert store.get("/d/a.pt") is None


def test_fill_headline_only_fills_a_missing_one(store):
    store.toggle("/d/a.pt")  # bookmarked before its sample had loaded
    assert store.fill_headline("/d/a.pt", HEADLINE) is True
    assert store.get("/d/a.pt").headline == HEADLINE
    assert store.fill_headline("/d/a.pt", {"schema": "other"}) is False  # the first one stays
    assert store.get("/d/a.pt").headline == HEADLINE
    assert store.fill_headline("/d/never.pt", HEADLINE) is False and store.get("/d/never.pt") is None
