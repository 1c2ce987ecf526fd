"""A newline and an ESC sequence in the folders `accept` and `serve-check` are given (the drafter,
the model, the data): every line either command prints keeps a path on that line, escaped
(\\n, \\x1b), in its results and in its one-line errors alike. Found by a hostile tester: the
error line of `accept` and `serve-check`'s own error lines broke at the path's newline."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.helpers.autouse import _no_ssh_agent, _one_torch_thread  # noqa: F401 - autouse fixtures
from tests.helpers.folder_world import Folders, run_cli

ODD = "odd\nname\x1b[31m"
SHOWN = "odd\\nname\\x1b[31m"  # as every line shows it


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> Folders:
    """A model, a drafter that fits it and its data, all inside a folder named ODD."""
    return Folders(tmp_path_factory.mktemp("names") / ODD)


def _one_line_per_path(text: str) -> None:
    assert "\x1b" not in text, repr(text[:2000])
    lines = text.splitlines()
    assert not any(line.startswith("name") for line in lines), text[:2000]  # a path broken at its newline
    assert all(line.count("odd") == line.count(SHOWN) for line in lines), text[:2000]


def test_accept_prints_its_result_with_the_paths_escaped(folders):
    p = run_cli("accept", folders.sample, "--drafter", folders.drafter, "--model", folders.model)
    assert p.returncode == 0, p.stderr[-2000:]
    _one_line_per_path(p.stdout + p.stderr)
    assert p.stdout.startswith(f"{folders.root}/data/s0.ckpt\n".replace(ODD, SHOWN)), p.stdout[:500]
    assert f"  drafter {folders.drafter} (".replace(ODD, SHOWN) in p.stdout
    p = run_cli("accept", folders.sample, "--drafter", folders.drafter, "--json")
    assert p.returncode == 0 and "\x1b" not in p.stdout
    assert json.loads(p.stdout)["drafter_info"]["path"] == str(folders.drafter)  # JSON keeps the path as it is


def test_accept_says_why_it_cannot_use_a_folder_in_one_line(folders):
    for drafter in (folders.model, folders.root / "none"):  # a model is no drafter; no such folder
        p = run_cli("accept", folders.sample, "--drafter", drafter)
        assert p.returncode == 2 and p.stdout == ""
        _one_line_per_path(p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert p.stderr.count(SHOWN) == 2, p.stderr  # the sample's path and the drafter's


def test_serve_check_prints_its_report_and_its_errors_on_real_lines(folders, tmp_path):
    p = run_cli("serve-check", folders.drafter, folders.data, "--model", folders.model)
    assert p.returncode in (0, 1) and p.stdout.startswith("serve-check: "), p.stderr[-2000:]
    _one_line_per_path(p.stdout + p.stderr)
    no_config = folders.root / "no-config"
    no_config.mkdir(exist_ok=True)
    for argv, said in (([no_config, folders.data, "--model", folders.model], "DRAFTER "),
                       ([folders.drafter, folders.data, "--model", folders.data], "--model: "),
                       ([folders.drafter, folders.root / "none", "--model", folders.model], "serve-check: ")):
        p = run_cli("serve-check", *argv)
        assert p.returncode == 2 and p.stdout == "", (argv, p.stdout[:500])
        _one_line_per_path(p.stderr)
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0] and SHOWN in lines[0], p.stderr
    shutil.rmtree(no_config)
