"""Fixtures for the bookmark store and CLI tests: real SQLite files, real subprocesses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import warm_cli
from tests.helpers.processes import subprocess_env


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def store(data_dir: Path):
    from eagle3_tui.bookmarks import open_store

    with open_store(data_dir) as s:
        yield s


@pytest.fixture
def cli(data_dir: Path):
    """Run `python -m eagle3_tui bookmarks ARGS... --data-dir DATA_DIR` as a user would."""

    def run(*args: str, stdin: str | None = None, data: bool = True) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "eagle3_tui", "bookmarks", *args]
        if data:
            argv += ["--data-dir", str(data_dir)]
        return warm_cli.run(argv, input=stdin, text=True, env=subprocess_env(), timeout=60)

    return run
