"""A scan worker that dies (killed by the kernel's OOM killer, a crash in a reader) never leaves
the scan waiting: the files it held are read again one by one, and only a file that kills a
worker on its own gets an error record that says so. Cancelling leaves no worker behind."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from eagle3_tui.engines.scan import local_run, options
from eagle3_tui.engines.scan.records import scan_tree
from tests.helpers.scan_build import build


def _children() -> set[int]:
    me, kids = os.getpid(), set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                        kids.add(int(pid))
            except (OSError, IndexError, ValueError):
                pass
    return kids


@pytest.fixture(autouse=True)
def two_workers_even_on_one_core(monkeypatch):
    # under `taskset -c 0` the scan would run in-process, with no worker to kill
    monkeypatch.setattr(options, "default_workers", lambda: 2)


def test_workers_killed_mid_scan_lose_no_file_and_hang_nothing(tmp_path):
    build(tmp_path, shards=4, per_shard=40, seed=3)  # 160 files: 10 chunks for 2 workers
    records: list[dict] = []
    done = threading.Event()
    before = _children()  # servers other tests started are not the scan's workers
    killed: list[int] = []

    def run():
        for r in scan_tree(str(tmp_path), workers=2, full=True):
            records.append(r)
            if len(records) == 1:
                killed.extend(_children() - before)
                for pid in killed:
                    os.kill(pid, signal.SIGKILL)  # as the kernel's OOM killer does
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(180), "the scan is still waiting for a dead worker"
    assert killed
    assert sorted(r["path"] for r in records) == sorted({r["path"] for r in records})
    assert len(records) == 160
    # the files the dead workers held were read again: none is reported lost
    assert [r for r in records if "error" in r] == []
    time.sleep(0.2)
    assert not _children() - before  # no worker left behind


def test_a_file_that_kills_its_worker_is_named_and_the_rest_are_read(tmp_path, monkeypatch):
    paths = build(tmp_path, shards=2, per_shard=40, seed=5)  # 80 files
    poison = os.path.relpath(paths[17], tmp_path)
    real = local_run.scan_file

    def scan_file(root, rel, *args, **kwargs):
        if rel == poison:  # reading this file takes the whole worker down, as an OOM kill does
            os.kill(os.getpid(), signal.SIGKILL)
        return real(root, rel, *args, **kwargs)

    monkeypatch.setattr(local_run, "scan_file", scan_file)  # the forked workers inherit it
    before = _children()
    records = list(scan_tree(str(tmp_path), workers=2))
    assert len(records) == 80 == len({r["path"] for r in records})
    bad = [r for r in records if "error" in r]
    assert [r["path"] for r in bad] == [poison]
    assert "died reading this file" in bad[0]["error"] and "signal 9" in bad[0]["error"]
    assert bad[0]["shard"] and bad[0]["size"]
    time.sleep(0.2)
    assert not _children() - before


def test_cancel_leaves_no_worker_alive_run_after_run(tmp_path):
    build(tmp_path, seed=4, shards=4, per_shard=40)
    before = _children()
    for _ in range(5):  # the executor tried before left one alive about one run in three
        cancel = threading.Event()
        for _record in scan_tree(str(tmp_path), workers=2, cancel=cancel):
            cancel.set()
        assert not _children() - before
