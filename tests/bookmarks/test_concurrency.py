"""Several processes share one store: concurrent writers lose nothing, a killed writer loses
nothing it committed. Real processes, real SQLite file, real SIGKILL."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from eagle3_tui.bookmarks import open_store

from tests.helpers.processes import subprocess_env

WRITER = str(Path(__file__).with_name("_writer.py"))


def _start(data_dir: Path, name: str, count: int, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, WRITER, str(data_dir), name, str(count), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )


def test_two_writers_at_once_lose_nothing(data_dir):
    data_dir.mkdir(parents=True)
    n = 120
    writers = [_start(data_dir, name, n, "shared") for name in ("alpha", "beta")]
    try:
        deadline = time.monotonic() + 120
        # both have opened the store before either writes: on a loaded machine, opening (which
        # also waits for the lock) could otherwise take longer than the other writer's whole run
        while not all((data_dir / f"opened-{name}").exists() for name in ("alpha", "beta")):
            gone = [w for w in writers if w.poll() is not None]
            assert not gone, f"a writer ended before the barrier: {gone[0].communicate()[1][-500:]}"
            assert time.monotonic() < deadline, "a writer never got ready"
            time.sleep(0.005)
        (data_dir / "go").touch()
        outputs = [w.communicate(timeout=120) for w in writers]
    finally:
        for w in writers:  # a failed wait must not leave a writer waiting at the barrier forever
            if w.poll() is None:
                w.kill()
                w.wait()
    for w, (out, err) in zip(writers, outputs):
        assert w.returncode == 0, err
        assert len(out.splitlines()) == n
    # the writers overlapped: each began writing before the other's last commit. (SQLite's busy
    # handler lets the writer holding the lock starve the other, so commits need not interleave;
    # what matters is that every add() of one ran while the other was contending for the lock.)
    alpha, beta = ([int(t) for t in err.split()] for _, err in outputs)
    assert len(alpha) == len(beta) == n + 1
    assert alpha[0] < beta[-1] and beta[0] < alpha[-1], "one writer finished before the other began"

    with open_store(data_dir) as store:
        keys = store.keys()
        for name in ("alpha", "beta"):
            assert all(f"/data/{name}/data_{i}.ckpt" in keys for i in range(n))
        # read-modify-write of one bookmark from two processes: every tag survives
        shared = store.get("gpu:/data/shared.ckpt")
        assert sorted(shared.tags) == sorted(f"{name}-{i}" for name in ("alpha", "beta") for i in range(n))
        assert len(store.list()) == 2 * n + 1


def test_writer_killed_again_and_again_loses_nothing_it_committed(data_dir):
    data_dir.mkdir(parents=True)
    (data_dir / "go").touch()
    rng = random.Random(6)
    committed: list[str] = []
    kills_mid_run = 0
    for run in range(12):
        w = _start(data_dir, f"run{run}", 100_000)
        if run % 2:  # from the start: lands in start-up, in opening, or between/inside writes
            time.sleep(rng.uniform(0.05, 0.5))
        else:  # from the moment it is up (start-up alone can take 0.5 s on a loaded machine)
            deadline = time.monotonic() + 30
            while not (data_dir / f"ready-run{run}").exists() and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(rng.uniform(0.05, 0.3))
        os.kill(w.pid, signal.SIGKILL)
        out, _ = w.communicate(timeout=30)
        assert w.returncode == -signal.SIGKILL
        lines = out.split("\n")
        committed += lines[:-1]  # the last piece has no newline: possibly cut mid-print
        kills_mid_run += bool(lines[:-1])

    assert kills_mid_run >= 6, "too few kills landed while writing; the test proves little"
    with open_store(data_dir) as store:
        keys = store.keys()
        missing = [k for k in committed if k not in keys]
        assert not missing, f"{len(missing)} committed bookmarks lost, e.g. {missing[:3]}"
        for key in committed[:: max(1, len(committed) // 50)]:
            b = store.get(key)
            name, i = key.split("/")[2], int(key.rsplit("_", 1)[1].split(".")[0])
            assert b.note.startswith(f"{name} {i} ") and b.tags == (name,)


_OPENER = """
import os, sys, time
from eagle3_tui.bookmarks import open_store
data_dir, name = sys.argv[1], sys.argv[2]
open(os.path.join(data_dir, "up-" + name), "w").close()
while not os.path.exists(os.path.join(data_dir, "go")):
    time.sleep(0.001)
with open_store(data_dir) as store:
    store.add("/data/" + name + ".ckpt", note=name)
"""


def test_many_processes_creating_the_store_at_once_all_succeed(tmp_path):
    """Several eagle3-tui started together on a machine with no store yet (a TUI and scripts):
    SQLite may answer "database is locked" at once to one of them while another switches the new
    file to WAL; every one must still open the store and keep its bookmark."""
    for attempt in range(4):
        data_dir = tmp_path / f"round{attempt}"
        data_dir.mkdir()
        names = [f"p{i}" for i in range(6)]
        procs = [subprocess.Popen([sys.executable, "-c", _OPENER, str(data_dir), name],
                                  stderr=subprocess.PIPE, text=True, env=subprocess_env()) for name in names]
        deadline = time.monotonic() + 60
        while not all((data_dir / f"up-{n}").exists() for n in names):
            assert time.monotonic() < deadline, "an opener never started"
            time.sleep(0.005)
        (data_dir / "go").touch()
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err[-400:]
        with open_store(data_dir) as store:
            assert {f"/data/{n}.ckpt" for n in names} <= store.keys()
