"""Issue 34.1: a session killed in the middle of `scan box:/data` leaves no process of the agent
behind on the box. Before, the agent exited on its stdin's EOF but the scan's forked workers
(each holding the other's pipe end) slept for ever under pid 1. Real OpenSSH sshd on loopback,
the CLI run as a user would; the box's processes are found in /proc."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.ssh import scan_box_json, write_shards
from tests.helpers.ssh_servers import Sshd

pytestmark = pytest.mark.asyncio(loop_scope="session")

FILES = 900


@pytest.fixture(scope="module")
def many(tmp_path_factory, untouched) -> Path:
    root = write_shards(tmp_path_factory.mktemp("orphans"), FILES)
    untouched(root)
    return root


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, start time) of every process on this machine."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        table[int(entry)] = (int(fields[1]), fields[19])
    return table


def descendants(root: int) -> set[tuple[int, str]]:
    """(pid, start time) of every process below `root` (start time: a reused pid is not the same)."""
    table = _processes()
    found, todo = set(), [root]
    while todo:
        parent = todo.pop()
        for pid, (ppid, start) in table.items():
            if ppid == parent and (pid, start) not in found:
                found.add((pid, start))
                todo.append(pid)
    return found


def alive(procs: set[tuple[int, str]]) -> set[tuple[int, str]]:
    table = _processes()
    return {(pid, start) for pid, start in procs if pid in table and table[pid][1] == start}


async def wait_gone(procs: set[tuple[int, str]], timeout: float = 20.0) -> set[tuple[int, str]]:
    """Poll /proc until every process in `procs` ended; what is still alive at `timeout`."""
    end = time.monotonic() + timeout
    while (left := alive(procs)) and time.monotonic() < end:
        await asyncio.sleep(0.1)
    return left


def _cmdlines(procs) -> list[str]:
    out = []
    for pid, _ in procs:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                out.append(f"{pid}: {f.read()[:80]!r}")
        except OSError:
            pass
    return out


async def scan_killing_the_session(sshd: Sshd, home: Path, folder: Path, how: signal.Signals):
    """Run `scan box:folder --json --workers 2`; once 100 records came, note every process under
    sshd (session, shell, agent, workers) and send `how` to the session processes. Returns (exit
    code, records, stderr, the processes noted)."""
    noted: set[tuple[int, str]] = set()

    def kill_the_session() -> None:
        noted.update(descendants(sshd.proc.pid))
        for pid in sshd.session_pids():
            os.kill(pid, how)

    # started cold, as sshd's session's own child: the processes under sshd are the ones it leaves
    rc, lines, err = await scan_box_json(home, folder, workers=2, after_lines=100, then=kill_the_session,
                                         remote_python=sys.executable)
    return rc, lines, err, noted


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGHUP, signal.SIGTERM], ids=["SIGKILL", "SIGHUP", "SIGTERM"])
async def test_no_agent_process_outlives_a_session_killed_mid_scan(own_box, many, how):
    sshd, home = own_box
    rc, lines, err, noted = await scan_killing_the_session(sshd, home, many, how)
    assert rc == 0, err
    assert lines[-1]["summary"]["files"] == FILES, "the scan reconnected and finished"
    assert len(noted) >= 3, f"the session, the agent and its scan workers were running: {noted}"
    left = await wait_gone(noted)
    assert not left, f"processes of the killed session still running: {_cmdlines(left)}"
    # and the agent of the second session ended with the CLI's connection
    left = await wait_gone(descendants(sshd.proc.pid))
    assert not left, f"processes of the finished session still running: {_cmdlines(left)}"
