"""Behaviour of the command line itself, whatever the subcommand."""

from __future__ import annotations

import subprocess
import sys


def test_output_cut_short_by_a_pipe_gives_no_traceback(tmp_path):
    for i in range(3000):
        (tmp_path / f"data_{i}.pt").touch()
    out = subprocess.run(
        f"{sys.executable} -m eagle3_tui ls {tmp_path} | head -n 2",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert out.stdout.splitlines()[1].endswith("data_1.pt")
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr
