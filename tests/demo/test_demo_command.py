"""`eagle3-tui demo` as a person at a terminal meets it (issue 57): a line that says what it is
doing while it writes (redrawn in place on a terminal, plain lines in a log), an existing demo
opened again without a byte written, `--rewrite` writing it anew, and a folder that is not a demo
refused and left as it was.

The command runs as a real process (`python -m eagle3_tui demo`), its stderr on a pseudo-terminal
where the test is about the terminal; every read waits for the process's output or its exit."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

CR_LINE = re.compile(r"\r\x1b\[K([^\r\n]*)")


def _run(cwd: Path, *argv: str, tty: bool) -> tuple[int, str]:
    """(exit status, stderr) of `eagle3-tui demo ARGV --write-only` run in `cwd`, its stderr a
    pseudo-terminal with `tty`."""
    cmd = [sys.executable, "-m", "eagle3_tui", "demo", *argv, "--write-only"]
    if not tty:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=600)
        return p.returncode, p.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:  # until the process closes the terminal (EIO on Linux once no writer is left)
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=600), b"".join(chunks).decode("utf-8", "replace")


def _state(folder: Path) -> dict[str, tuple[int, int, int]]:
    """(inode, mtime_ns, size) of every file under `folder`: what a write would change."""
    out = {}
    for root, _dirs, files in os.walk(folder):
        for name in files:
            st = os.stat(os.path.join(root, name))
            out[os.path.relpath(os.path.join(root, name), folder)] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return out


@pytest.fixture(scope="module")
def written_on_a_terminal(tmp_path_factory) -> tuple[Path, int, str]:
    """A fresh folder where `eagle3-tui demo --no-drafter` wrote ./eagle3-demo, stderr a terminal."""
    where = tmp_path_factory.mktemp("terminal")
    rc, err = _run(where, "--no-drafter", tty=True)
    return where, rc, err


def test_a_progress_line_is_redrawn_in_place_while_the_demo_is_written(written_on_a_terminal):
    where, rc, err = written_on_a_terminal
    assert rc == 0, err
    drawn = CR_LINE.findall(err)
    assert drawn[0].startswith("demo: loading torch")  # the first thing on screen, before torch loads
    counters = {m.group(1) for line in drawn if (m := re.search(r"training samples .* (\d+)/24", line))}
    assert {"1", "12", "24"} <= counters  # the same line counting up, sample by sample
    assert any("inference captures" in line for line in drawn)
    assert "\n" not in err.split("demo: wrote")[0].replace("\r\n", "")  # one line until it is done
    last = err.rsplit("\r\x1b[K", 1)[-1].strip()  # what stays on screen: the progress line is erased
    assert last.startswith("demo: wrote eagle3-demo in ") and "`eagle3-tui demo --no-drafter` opens it again" in last


def test_a_second_run_opens_the_demo_without_writing_it_and_rewrite_writes_it(written_on_a_terminal):
    where, _rc, _err = written_on_a_terminal
    demo = where / "eagle3-demo"
    before = _state(demo)
    rc, err = _run(where, "--no-drafter", tty=False)
    assert rc == 0 and err.strip().splitlines() == [
        "demo: opened eagle3-demo as it is, written earlier by this version, with these options; "
        "--rewrite writes it anew"], err
    assert _state(demo) == before  # not a byte written: same inodes, times and sizes

    rc, err = _run(where, "--no-drafter", "--rewrite", tty=False)
    assert rc == 0, err
    lines = err.strip().splitlines()
    assert lines[0].startswith("demo: loading torch") and any("writing training samples" in x for x in lines)
    assert lines[-1].startswith("demo: rewrote eagle3-demo in ") and "(--rewrite)" in lines[-1]
    after = _state(demo)
    assert after.keys() == before.keys()
    assert after["train/rows_0-2000/data_0.ckpt"][1] != before["train/rows_0-2000/data_0.ckpt"][1]
    assert after[".eagle3-demo.json"][0] != before[".eagle3-demo.json"][0]


def test_other_options_or_a_missing_file_rewrite_the_demo_and_say_why(tmp_path):
    from eagle3_tui.demo.folder import demo_options, reopenable, write_stamp

    demo = tmp_path / "d"
    demo.mkdir()
    (demo / "README.txt").write_text("eagle3-tui demo dataset (seed 0)\n")
    assert reopenable(str(demo), demo_options(0, False, False)) == (None, "written by an earlier eagle3-tui, "
                                                                           "or not finished")
    manifest = {"dir": str(demo), "train": ["README.txt"], "train_pt": [], "train_other": [], "infer": [],
                "other": ["gone.pt"], "drafter": None}
    write_stamp(str(demo), demo_options(0, False, False), manifest)  # type: ignore[arg-type]
    assert reopenable(str(demo), demo_options(2, False, False)) == (None, "it held seed 0")
    assert reopenable(str(demo), demo_options(0, False, False)) == (None, "gone.pt is missing")
    (demo / "gone.pt").write_text("x")
    found, why = reopenable(str(demo), demo_options(0, False, False))
    assert found is not None and why.startswith("written earlier by this version")


@pytest.mark.parametrize("argv", [(), ("--rewrite",)])
def test_a_folder_that_is_not_a_demo_is_refused_and_left_as_it_was(tmp_path, argv):
    mine = tmp_path / "mine"
    (mine / "notes").mkdir(parents=True)
    (mine / "notes" / "plan.txt").write_text("precious")
    (mine / "README.txt").write_text("my project\n")
    before = _state(mine)
    rc, err = _run(tmp_path, "mine", *argv, tty=False)
    assert rc == 1 and err.strip().splitlines() == [
        "eagle3-tui demo: mine: not empty and not a demo dataset; choose another folder (nothing in it was changed)"]
    assert _state(mine) == before
