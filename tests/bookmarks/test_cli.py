"""`eagle3-tui bookmarks` as a script uses it: add a batch, list, remove, export in every format."""

from __future__ import annotations

import csv
import io
import json

import pytest

from eagle3_tui.bookmarks import open_store

NASTY = [
    "gpu-box:/data/eagle3/rows_0-2000/data_0.ckpt",
    "ssh://me@gpu-box:2222/data/run 2/it's \"quoted\", with comma.pt",
    "/local/caf\u00e9/$(touch PWNED).pt",
]


def test_add_list_remove_round_trip(cli, data_dir):
    r = cli("add", "--force", *NASTY, "--note", "layer off by one, maybe", "--tag", "shift", "--tag", "nan")
    assert r.returncode == 0, r.stderr
    assert "3 new" in r.stderr

    r = cli("list", "--json")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["target"] for row in rows] == NASTY
    assert all(row["note"] == "layer off by one, maybe" and row["tags"] == ["shift", "nan"] for row in rows)
    assert rows[1]["host"] == "gpu-box" and rows[1]["user"] == "me" and rows[1]["port"] == 2222

    human = cli("list").stdout  # the default human listing shows every target, its tags and note
    assert all(t in human for t in NASTY) and "#shift #nan" in human and "layer off by one" in human

    r = cli("add", NASTY[0], "--tag", "later")  # an existing bookmark: tags merge, note kept
    assert "0 new, 1 updated" in r.stderr
    with open_store(data_dir) as s:
        assert s.get(NASTY[0]).tags == ("shift", "nan", "later")
        assert s.get(NASTY[0]).note == "layer off by one, maybe"

    r = cli("remove", NASTY[2])
    assert r.returncode == 0, r.stderr
    assert [json.loads(x)["target"] for x in cli("list", "--json").stdout.splitlines()] == NASTY[:2]


def test_targets_from_stdin(cli, data_dir):
    r = cli("add", "-", "--tag", "batch", stdin="gpu:/d/a.pt\n\ngpu:/d/b c.pt\r\n")
    assert r.returncode == 0, r.stderr
    with open_store(data_dir) as s:
        assert [b.target for b in s.list()] == ["gpu:/d/a.pt", "gpu:/d/b c.pt"]


def test_export_json_parses_back_to_the_list(cli):
    cli("add", "--force", *NASTY, "--note", "n,1\nline 2", "--tag", "t")
    r = cli("export", "--format", "json")
    assert r.returncode == 0, r.stderr
    exported = json.loads(r.stdout)
    listed = [json.loads(x) for x in cli("list", "--json").stdout.splitlines()]
    assert exported == listed and [e["target"] for e in exported] == NASTY
    assert exported[0]["note"] == "n,1\nline 2"
    assert json.loads(cli("export").stdout) == exported  # json is the default


def test_export_csv_reads_back_with_the_csv_module(cli, data_dir):
    cli("add", "--force", *NASTY, "--note", 'says "hi", twice\nthen more', "--tag", "a", "--tag", "b")
    headline = {"schema": "SpecForge offline", "tokens": 16, "hidden": 32,
                "slots": [{"label": "aux0", "norm_mean": 1.5}, {"label": "aux1", "norm_mean": 2.25}]}  # fmt: skip
    with open_store(data_dir) as s:
        s.add(NASTY[0], headline=headline)
    r = cli("export", "--format", "csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [row["target"] for row in rows] == NASTY
    assert {row["note"] for row in rows} == {'says "hi", twice\nthen more'}
    assert rows[0]["tags"].split(";") == ["a", "b"]
    assert (rows[0]["schema"], rows[0]["tokens"], rows[0]["hidden"]) == ("SpecForge offline", "16", "32")
    assert [float(x) for x in rows[0]["norm_means"].split()] == [1.5, 2.25]
    assert rows[1]["port"] == "2222" and rows[2]["host"] == ""


def test_export_paths_one_per_line_per_machine(cli):
    cli("add", "--force", *NASTY)
    r = cli("export", "--format", "paths", "--host", "gpu-box")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["/data/eagle3/rows_0-2000/data_0.ckpt",
                                     "/data/run 2/it's \"quoted\", with comma.pt"]  # fmt: skip
    r = cli("export", "--format", "paths", "--host", "local")
    assert r.stdout.splitlines() == ["/local/caf\u00e9/$(touch PWNED).pt"]
    r = cli("export", "--format", "paths")
    assert len(r.stdout.splitlines()) == 3 and "use --host" in r.stderr


def test_a_path_with_a_newline_needs_null_separated_paths(cli):
    cli("add", "gpu:/d/two\nlines.pt", "gpu:/d/ok.pt")
    r = cli("export", "--format", "paths")
    assert r.returncode == 1 and "--null" in r.stderr and r.stdout == ""
    r = cli("export", "--format", "paths", "--null")
    assert r.returncode == 0
    assert r.stdout.split("\0")[:-1] == ["/d/two\nlines.pt", "/d/ok.pt"]


def test_export_filters_by_tag(cli):
    cli("add", NASTY[0], "--tag", "keep")
    cli("add", NASTY[1], "--tag", "drop")
    r = cli("export", "--format", "paths", "--tag", "keep")
    assert r.stdout.splitlines() == ["/data/eagle3/rows_0-2000/data_0.ckpt"]


def test_removing_a_missing_bookmark_fails_but_removes_the_others(cli, data_dir):
    cli("add", "--force", "/d/a.pt")
    r = cli("remove", "/d/a.pt", "/d/never.pt")
    assert r.returncode == 1
    assert "not bookmarked: /d/never.pt" in r.stderr
    with open_store(data_dir) as s:
        assert s.list() == []


@pytest.mark.parametrize(
    "args",
    [["add"], ["add", ""], ["add", "ssh://gpu:99999/x"], ["add", "/x", "--tag", "two words"],
     ["export", "--format", "xml"], ["frobnicate"]],
)  # fmt: skip
def test_usage_errors_exit_2_with_one_message_and_change_nothing(data_dir, capsys, args):
    from eagle3_tui.cli import main

    try:  # in-process: the same code path as the subprocess round trips, without the start-up
        code = main(["bookmarks", *args, "--data-dir", str(data_dir)])
    except SystemExit as e:  # argparse's own usage errors
        code = e.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and err.strip()
    assert not (data_dir / "bookmarks.sqlite3").exists()


def test_data_dir_flag_overrides_the_environment(cli, tmp_path, data_dir):
    r = cli("add", "--force", "/d/a.pt")  # --data-dir DATA_DIR
    assert r.returncode == 0 and (data_dir / "bookmarks.sqlite3").is_file()
    assert cli("list", "--json", data=False).stdout == ""  # EAGLE3_TUI_DATA_DIR's store is empty
    r = cli("--data-dir", str(data_dir), "list", "--json", data=False)  # flag before the action
    assert json.loads(r.stdout)["target"] == "/d/a.pt"
    assert cli(data=True).stdout.startswith("/d/a.pt")  # no action: list


def test_add_with_summarize_keeps_the_samples_headline(cli, tmp_path):
    torch = pytest.importorskip("torch")
    T, H = 24, 32
    good = tmp_path / "rows_0-2000" / "data_0.ckpt"
    good.parent.mkdir()
    aux = torch.randn(1, T, 3 * H) * torch.tensor([1.0, 4.0, 16.0]).repeat_interleave(H)
    torch.save({"input_ids": torch.arange(T), "aux_hidden_state": aux, "hidden_state": torch.randn(1, T, H)}, good)
    missing = tmp_path / "rows_0-2000" / "data_1.ckpt"

    r = cli("add", "--force", "--summarize", str(good), str(missing), "--tag", "s")
    assert r.returncode == 1  # one sample could not be summarised ...
    assert str(missing) in r.stderr and len(r.stderr.splitlines()) == 2
    rows = {row["target"]: row for row in map(json.loads, cli("list", "--json").stdout.splitlines())}
    assert set(rows) == {str(good), str(missing)}  # ... but both are bookmarked

    h = rows[str(good)]["headline"]
    assert (h["tokens"], h["hidden"], len(h["slots"])) == (T, H, 3)
    means = [s["norm_mean"] for s in h["slots"]]
    assert means[0] < means[1] < means[2]  # the slots' scales 1, 4, 16 show in the norm means
    assert rows[str(missing)]["headline"]["error"]
    assert f"T={T}" in cli("list").stdout


def test_bookmarks_cli_never_imports_torch_or_textual(data_dir):
    import subprocess
    import sys

    from tests.helpers.processes import subprocess_env

    code = (
        "import sys\nfrom eagle3_tui.cli import main\n"
        f"main(['bookmarks', 'add', '/d/a.pt', '--data-dir', {str(data_dir)!r}])\n"
        f"main(['bookmarks', 'export', '--format', 'csv', '--data-dir', {str(data_dir)!r}])\n"
        "print(sorted(m for m in ('torch', 'textual', 'asyncssh') if m in sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env())
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "[]"
