"""Issue 44, item 5: no folder of our own inside the dataset from any source. platformdirs puts the
scan cache under XDG_CACHE_HOME and the bookmarks under XDG_DATA_HOME: pointed into the dataset,
they are refused as EAGLE3_TUI_CACHE_DIR and EAGLE3_TUI_DATA_DIR are, and nothing is written."""

from __future__ import annotations

import pytest

from tests.hostile.test_data_dir_inside import dataset, files_under, run  # noqa: F401 - the fixture too


@pytest.mark.parametrize("command", ["scan", "pair"])
def test_xdg_cache_home_inside_the_dataset_is_refused(dataset, command):  # noqa: F811
    before = files_under(dataset)
    args = [command, str(dataset / "train" / "data_0.ckpt")] if command == "pair" else [command]
    r = run([*args, str(dataset), "--json"] if command == "scan" else [*args, str(dataset)],
            EAGLE3_TUI_CACHE_DIR="", XDG_CACHE_HOME=str(dataset / ".cache"))
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "XDG_CACHE_HOME" in lines[0] and "is inside the dataset" in lines[0], r.stderr
    assert files_under(dataset) == before, "nothing was created in the dataset"


@pytest.mark.parametrize("variable", ["XDG_CACHE_HOME", "XDG_DATA_HOME"])
def test_the_tui_refuses_an_xdg_folder_inside_the_dataset(dataset, variable):  # noqa: F811
    before = files_under(dataset)
    r = run([str(dataset)], EAGLE3_TUI_CACHE_DIR="", EAGLE3_TUI_DATA_DIR="", **{variable: str(dataset / "mine")})
    assert r.returncode == 2 and variable in r.stderr and "is inside the dataset" in r.stderr, r.stderr
    assert files_under(dataset) == before


def test_xdg_cache_home_next_to_the_dataset_is_used(dataset, tmp_path):  # noqa: F811
    r = run(["scan", str(dataset), "--json"], EAGLE3_TUI_CACHE_DIR="", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert r.returncode in (0, 1), r.stderr
    assert (tmp_path / "xdg" / "eagle3-tui" / "scan.sqlite").is_file()
