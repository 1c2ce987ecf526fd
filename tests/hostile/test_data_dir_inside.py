"""Issue 34.3 from the command line: a data folder or cache folder the user chose inside the
local dataset is refused at start with one line, before the TUI or the scan writes anything
there (bookmarks.sqlite3 and its -wal/-shm, exports, the scan cache)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import warm_cli
from tests.helpers.processes import subprocess_env
from tests.helpers.ssh import write_sample


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def dataset(tmp_path) -> Path:
    root = tmp_path / "ds"
    (root / "train").mkdir(parents=True)
    for i in range(2):
        write_sample(root / "train" / f"data_{i}.ckpt", seed=i)
    return root


def run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    try:
        return warm_cli.run([sys.executable, "-m", "eagle3_tui", *args], capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL, env=subprocess_env(**env))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{args}: the TUI started instead of refusing the folder")


@pytest.mark.parametrize("how", ["--data-dir", "EAGLE3_TUI_DATA_DIR", "EAGLE3_TUI_CACHE_DIR", "a file as target"])
def test_the_tui_refuses_a_folder_of_its_own_inside_the_dataset(dataset, tmp_path, how):
    inside = str(dataset / "train" / "mine")
    before = files_under(dataset)
    target, args, env = str(dataset), [], {}
    if how == "--data-dir":
        args = ["--data-dir", inside]
    elif how == "a file as target":
        target, args = str(dataset / "train" / "data_0.ckpt"), ["--data-dir", inside]
    else:
        env = {how: inside}
    r = run([target, *args], **env)
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "is inside the dataset" in lines[0] and "mine" in lines[0], r.stderr
    assert files_under(dataset) == before, "nothing was created in the dataset"


def test_scan_refuses_a_cache_inside_the_dataset_and_runs_without_one(dataset):
    before = files_under(dataset)
    r = run(["scan", str(dataset), "--json"], EAGLE3_TUI_CACHE_DIR=str(dataset / ".cache"))
    assert r.returncode == 2 and "EAGLE3_TUI_CACHE_DIR" in r.stderr and "inside the dataset" in r.stderr, r.stderr
    assert files_under(dataset) == before
    r = run(["scan", str(dataset), "--json", "--no-cache"], EAGLE3_TUI_CACHE_DIR=str(dataset / ".cache"))
    assert r.returncode in (0, 1), r.stderr
    assert files_under(dataset) == before


def test_a_data_folder_next_to_the_dataset_is_fine(dataset, tmp_path):
    r = run(["bookmarks", "add", str(dataset / "train" / "data_0.ckpt"), "--data-dir", str(tmp_path / "ds-notes")])
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ds-notes" / "bookmarks.sqlite3").is_file()


def test_pair_refuses_a_cache_inside_the_dataset(dataset):
    """Found in the hostile pass: `pair` wrote its record cache into the dataset."""
    before = files_under(dataset)
    capture = dataset / "train" / "data_0.ckpt"
    r = run(["pair", str(capture), str(dataset)], EAGLE3_TUI_CACHE_DIR=str(dataset / ".cache"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "inside the dataset" in r.stderr, r.stderr
    assert files_under(dataset) == before
