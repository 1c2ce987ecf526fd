"""Issue 34.2: nothing the CLI prints can steer the terminal. A note, tag, file name, config
value or a message quoting one may hold ESC ] 0 ; ... BEL (retitles the terminal), ESC [ 31 m
(recolours what follows), DEL, C1 controls or a bidi override. Every command's output goes
through names.terminal_text (the TUI's `printable`): they show as \\x1b-style escapes, JSON
stays JSON with the same values. Real subprocesses, as a user runs them."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.helpers import warm_cli
from tests.helpers.processes import subprocess_env

EVIL = "x\x1b]0;PWN\x07\x1b[31mRED\x7f\x9b2J\u202eevil"
#: what no output may hold: C0 controls but TAB/LF, DEL, C1 controls, bidi overrides
STEERING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def run(*args: str, data_dir: Path, stdin: str | None = None) -> tuple[int, str, str]:
    proc = warm_cli.run(
        [sys.executable, "-m", "eagle3_tui", *args], input=stdin, timeout=120,
        env=subprocess_env(EAGLE3_TUI_DATA_DIR=str(data_dir), EAGLE3_TUI_CACHE_DIR=str(data_dir / "cache")),
    )
    out = proc.stdout.decode("utf-8", "surrogateescape")
    err = proc.stderr.decode("utf-8", "surrogateescape")
    return proc.returncode, out, err


def clean(text: str) -> bool:
    return STEERING.search(text) is None


def test_bookmarks_list_shows_a_hostile_note_and_tag_escaped(tmp_path):
    data = tmp_path / "data"
    rc, _, err = run("bookmarks", "add", "--force", f"/d/{EVIL}.pt", "--note", EVIL, "--tag", "t\x1b[31m",
                     data_dir=data)
    assert rc == 0, err
    assert clean(err), repr(err)  # "1 new ... in PATH"
    rc, out, err = run("bookmarks", "list", data_dir=data)
    assert rc == 0 and clean(out) and clean(err), repr(out)
    assert "x\\x1b]0;PWN\\x07\\x1b[31mRED\\x7f\\x9b2J\\u202eevil" in out, out  # the note, escaped as the TUI does
    assert "#t\\x1b[31m" in out
    rc, out, _ = run("bookmarks", "list", "--json", data_dir=data)
    assert clean(out), repr(out)
    row = json.loads(out)
    assert row["note"] == EVIL and row["target"] == f"/d/{EVIL}.pt", "the same values, only written safely"
    rc, out, _ = run("bookmarks", "export", "--format", "json", data_dir=data)
    assert clean(out) and json.loads(out)[0]["note"] == EVIL


def test_an_export_to_a_pipe_is_the_data_as_it_is(tmp_path):
    """`export --format paths --null | xargs -0`: NUL ends each path, a name keeps its bytes."""
    data = tmp_path / "data"
    run("bookmarks", "add", "--force", "/d/a\nb.pt", "/d/c.pt", data_dir=data)
    rc, out, err = run("bookmarks", "export", "--format", "paths", "--null", data_dir=data)
    assert rc == 0, err
    assert out == "/d/a\nb.pt\0/d/c.pt\0"


@pytest.mark.parametrize("argv", [
    ["summary", "{evil}.pt"],
    ["ls", "{evil}"],
    ["compare", "{evil}.pt", "{evil}2.pt"],
    ["scan", "{evil}"],
    ["pair", "{evil}.pt", "{evil}"],
    ["identify", "{evil}.pt", "--model", "{evil}"],
    ["accept", "{evil}.pt", "--drafter", "{evil}"],
    ["bookmarks", "remove", "{evil}"],
    ["summary", "a.pt", "--k{raw}"],
    ["--x{raw}"],
], ids=lambda a: "-".join(a[:2]).replace("{evil}", "EVIL").replace("{tmp}/", ""))
def test_error_messages_quoting_a_hostile_argument_are_escaped(tmp_path, argv):
    argv = [a.format(evil=str(tmp_path / EVIL), raw=EVIL) for a in argv]
    rc, out, err = run(*argv, data_dir=tmp_path / "data")
    assert rc != 0
    assert clean(out) and clean(err), f"raw control characters reached the terminal: {err!r}"
    assert "\\x1b]0;PWN\\x07" in out + err, "the name is still shown, escaped"


def test_a_scan_report_of_hostile_file_names_is_escaped(tmp_path):
    from tests.helpers.ssh import write_sample

    root = tmp_path / "ds"
    root.mkdir()
    write_sample(root / f"data_0{EVIL}.ckpt", seed=0)
    (root / f"data_1{EVIL}.ckpt").write_bytes(b"not a checkpoint")
    for args in (["scan", str(root)], ["scan", str(root), "--json"], ["ls", str(root)], ["ls", str(root), "--json"]):
        rc, out, err = run(*args, data_dir=tmp_path / "data")
        assert clean(out) and clean(err), (args, repr(out + err))
        assert "PWN" in out, (args, out)
        if "--json" in args:
            for line in out.splitlines():
                json.loads(line)


def test_a_scan_of_a_name_that_is_not_utf8_finishes_and_caches_the_rest(tmp_path):
    """Found in the hostile pass: the record cache (SQLite) refused the name and the scan ended
    in a UnicodeEncodeError traceback after reading everything."""
    import os

    from tests.helpers.ssh import write_sample

    root = tmp_path / "ds"
    root.mkdir()
    write_sample(root / "data_0.ckpt", seed=0)
    write_sample(Path(os.fsdecode(bytes(root) + b"/data_1\xff.ckpt")), seed=1)
    for cached in (0, 1):
        rc, out, err = run("scan", str(root), "--json", data_dir=tmp_path / "data")
        assert rc == 0 and "Traceback" not in err, err
        *records, last = [json.loads(line) for line in out.splitlines()]
        assert sorted(r["path"] for r in records) == ["data_0.ckpt", "data_1\udcff.ckpt"]
        assert last["summary"]["cached"] == cached, "the UTF-8 name comes from the cache the second time"


def test_a_newline_in_a_name_keeps_each_printed_row_on_one_line(tmp_path):
    """Found in the hostile pass: pair's matches, compare's A/B header and bookmarks list
    printed a name's newline as it is, so one row became two."""
    from tests.helpers.ssh import write_sample

    root = tmp_path / "ds"
    root.mkdir()
    write_sample(root / "data_0.ckpt", seed=0)
    odd = root / "data_1\n.ckpt"
    write_sample(odd, seed=0)
    data = tmp_path / "data"
    _, out, _ = run("pair", str(root / "data_0.ckpt"), str(root), data_dir=data)
    assert "data_1\\n.ckpt" in out and not any(line.startswith(".ckpt") for line in out.splitlines()), out
    _, out, _ = run("compare", str(odd), str(root / "data_0.ckpt"), data_dir=data)
    assert f"A  {root}/data_1\\n.ckpt" in out, out
    run("bookmarks", "add", str(odd), data_dir=data)
    _, out, _ = run("bookmarks", "list", data_dir=data)
    assert out.splitlines()[0].endswith("data_1\\n.ckpt"), out
