"""A scan worker that dies (killed, out of memory) never leaves the scan waiting: the files of the
batches it took down come back as error records that say so, and the rest as usual."""

from __future__ import annotations

import os
import signal
import threading
import time

from eagle3_tui.engines.scan import options
from eagle3_tui.engines.scan.records import LOST, scan_tree
from tests.helpers.scan_build import build


def _children() -> list[int]:
    me, kids = os.getpid(), []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                        kids.append(int(pid))
            except (OSError, IndexError, ValueError):
                pass
    return kids


def test_a_killed_worker_gives_error_records_not_a_hang(tmp_path, monkeypatch):
    # two workers even on one core (`taskset -c 0`), where the scan would run in-process
    monkeypatch.setattr(options, "default_workers", lambda: 2)
    build(tmp_path, shards=4, per_shard=40, seed=3)  # 160 files: 10 batches for 2 workers
    records: list[dict] = []
    done = threading.Event()
    before = set(_children())  # servers and helpers other tests started: not the scan's workers
    workers: list[int] = []

    def run():
        for r in scan_tree(str(tmp_path), workers=2, full=True):
            records.append(r)
            if len(records) == 1:
                workers.extend(p for p in _children() if p not in before)
                for pid in workers:
                    os.kill(pid, signal.SIGKILL)  # as the kernel's OOM killer does
        done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert done.wait(120), "the scan is still waiting for a dead worker"
    assert len(records) == 160 and len({r["path"] for r in records}) == 160
    lost = [r for r in records if r.get("error") == LOST]
    assert lost and len(lost) < 160, len(lost)
    assert all(r["shard"] and r["size"] for r in lost)
    assert workers
    time.sleep(0.2)
    assert not set(_children()) - before  # no worker left behind
