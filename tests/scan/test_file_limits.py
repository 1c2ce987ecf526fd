"""Every file in the scan's process pool has a time limit and a memory limit: a file that reads
for ever or allocates without bound is named in the results (its worker stopped, or its
allocation refused) and every other file gets its record. Cancelling ends a pool whose worker
hangs, and no worker is left behind."""

from __future__ import annotations

import functools
import gzip
import io
import json
import multiprocessing
import os
import resource
import signal
import struct
import subprocess
import sys
import threading
import time

import pytest
import torch

from eagle3_tui.engines.scan import local_run, options, walk
from eagle3_tui.engines.scan.pool import TaskFailed, TimedOut, run_tasks
from eagle3_tui.engines.scan.records import scan_tree
from tests.helpers.processes import first_line, subprocess_env
from tests.helpers.scan_build import build

HANG, HOG = "data_5.ckpt", "data_21.ckpt"  # one in the first chunk of 16 files, one in the second


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


def _gone(pids: set[int], within: float = 30.0) -> bool:
    """Whether none of `pids` is a child of this process any more (waits for it, up to `within`)."""
    end = time.monotonic() + within
    while pids & _children():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture(autouse=True)
def two_workers_even_on_one_core(monkeypatch):
    # under `taskset -c 0` the scan would run in-process, with no worker to stop
    monkeypatch.setattr(options, "default_workers", lambda: 2)


def _with_hostiles(args, chunk):
    """local_run._scan_chunk, but the file named HANG reads for ever and HOG allocates (and touches)
    8 MiB after 8 MiB: real work in the worker, what a reader stuck on a hostile file does."""
    for rel, size, mtime in chunk:
        name = rel.rsplit("/", 1)[-1]
        if name == HANG:
            while True:
                time.sleep(0.05)
        if name == HOG:
            held = []
            while len(held) < 128:  # 1 GiB: far past the limit the test gives, never reached
                held.append(bytearray(8 << 20))
            yield {"path": rel, "unbounded": True}
            continue
        yield from local_run._scan_chunk(args, [(rel, size, mtime)])


def _listing(root) -> list[tuple[str, int, float]]:
    return [(rel, size, mtime) for rel, size, mtime, _ in walk.walk(str(root))]


def _pool(root, fn, cancel, **limits):
    todo = _listing(root)
    chunks = [todo[i : i + options.CHUNK_FILES] for i in range(0, len(todo), options.CHUNK_FILES)]
    args = (str(root), False, options.DEFAULT_ROWS, options.DEFAULT_BUDGET, False, None, None)
    return todo, run_tasks(fn, args, chunks, workers=2, ctx=multiprocessing.get_context("fork"), cancel=cancel,
                           initializer=functools.partial(local_run._init_worker, False), **limits)


def test_a_file_that_hangs_and_one_that_hogs_memory_are_named_and_every_other_file_read(tmp_path):
    build(tmp_path, shards=2, per_shard=16, seed=7)  # 32 files: two chunks, one for each worker
    before, limit_before = _children(), resource.getrlimit(resource.RLIMIT_DATA)
    got: dict[str, object] = {}
    seen: set[int] = set()
    done = threading.Event()

    def run():
        todo, results = _pool(tmp_path, _with_hostiles, threading.Event(), time_limit=3.0, memory_limit=256 << 20)
        assert len(todo) == 32
        for item, result in results:
            seen.update(_children() - before)
            assert item[0] not in got, f"{item[0]} came twice"
            got[item[0]] = result
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(180), "the scan waits for a file that never ends"
    assert len(got) == 32
    hang = next(v for k, v in got.items() if k.endswith("/" + HANG))
    hog = next(v for k, v in got.items() if k.endswith("/" + HOG))
    assert isinstance(hang, TimedOut) and hang.seconds == 3.0
    # the allocation past the limit failed inside the worker, as torch's allocator does
    assert isinstance(hog, TaskFailed) and "MemoryError" in str(hog), hog
    others = {k: v for k, v in got.items() if v is not hang and v is not hog}
    assert len(others) == 30
    assert all(isinstance(v, dict) and v["path"] == k and "error" not in v and v["tokens"] for k, v in others.items())
    assert len(seen) >= 3  # the hung worker was replaced by a fresh one
    assert _gone(seen)
    assert resource.getrlimit(resource.RLIMIT_DATA) == limit_before  # the limit is the workers' alone


def test_cancel_ends_a_pool_whose_worker_hangs(tmp_path):
    build(tmp_path, shards=2, per_shard=16, seed=8)
    before = _children()
    cancel, done = threading.Event(), threading.Event()
    first: list = []

    def run():
        _, results = _pool(tmp_path, _with_hostiles, cancel, memory_limit=256 << 20)  # no time limit
        for item, _result in results:
            first.append(item)
            cancel.set()  # the other worker's chunk is done; the first chunk's worker hangs on HANG
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(120), "cancelling did not end a pool whose worker hangs"
    assert first
    assert _gone(_children() - before)


def _legacy_hog(path) -> None:
    """A 600-byte torch file in the legacy (non-zip) format whose one storage says it holds 2**31 - 1
    doubles: loading it asks for 16 GiB at once, before a byte of it is read."""
    numel = 123457
    buf = io.BytesIO()
    torch.save({"input_ids": torch.arange(8), "aux_hidden_state": torch.zeros(numel, dtype=torch.float64)}, buf,
               _use_new_zipfile_serialization=False)
    data = buf.getvalue().replace(b"J" + struct.pack("<i", numel), b"J" + struct.pack("<i", 2**31 - 1))
    cut = data.rfind(struct.pack("<q", numel))
    path.write_bytes(data[: cut + 72])


def _slow_sample(path) -> None:
    """A real sample that takes a while to read in full: 896 MiB of bf16 states inside gzip (zeros:
    4 MB on disk; the gzip cap is 1 GiB), gunzipped, mapped and read whole (~1 s on one core here)."""
    t, h, k = 8192, 14336, 3
    with gzip.open(path, "wb", compresslevel=1) as f:
        torch.save({"input_ids": torch.ones(t, dtype=torch.int64), "loss_mask": torch.ones(t, dtype=torch.int64),
                    "aux_hidden_state": torch.zeros(1, t, k * h, dtype=torch.bfloat16),
                    "hidden_state": torch.ones(1, t, h, dtype=torch.bfloat16)}, f)


def test_scan_names_the_file_past_its_time_limit_and_the_one_past_its_memory_and_reads_the_rest(tmp_path):
    build(tmp_path, shards=2, per_shard=12, seed=9)  # 24 small files: two chunks
    _slow_sample(tmp_path / "rows_12-24" / "data_30.ckpt.gz")
    _legacy_hog(tmp_path / "rows_0-12" / "data_40.pt")
    before = _children()
    # 0.15 s: the slow sample takes ~1 s here, each small file a few milliseconds
    records = list(scan_tree(str(tmp_path), workers=2, full=True, time_limit=0.15))
    assert len(records) == 26 == len({r["path"] for r in records})
    by_path = {r["path"]: r for r in records}
    slow, hog = by_path.pop("rows_12-24/data_30.ckpt.gz"), by_path.pop("rows_0-12/data_40.pt")
    assert slow["error"] == "reading this file took longer than 0.15 s: stopped (a hostile or broken file?)"
    assert slow["shard"] == "rows_12-24" and slow["size"] and slow["stamp"]
    assert hog["error"] == "out of memory while reading the file (it asked for 16.0 GiB at once)", hog
    assert [p for p, r in by_path.items() if "error" in r] == []
    assert _gone(_children() - before)


def test_the_default_limit_gives_a_drafter_that_reads_every_row_longer():
    assert options.file_time_limit(full=False, drafter=True) == options.FILE_SECONDS == 60
    assert options.file_time_limit(full=True, drafter=False) == options.FILE_SECONDS
    assert options.file_time_limit(full=True, drafter=True) == options.DRAFTER_FILE_SECONDS


_PAUSED = """
import json, multiprocessing, sys, threading, time
from eagle3_tui.engines.scan.pool import run_tasks

def slow(shared, items):
    for item in items:
        print("on", item, flush=True)
        time.sleep(0.5)
        yield item

out = run_tasks(slow, None, [[1], [2]], workers=2, ctx=multiprocessing.get_context("fork"),
                cancel=threading.Event(), time_limit=1.0)
print(json.dumps([[item, type(r).__name__] for item, r in out]), flush=True)
"""


def test_a_pause_of_the_whole_scan_is_not_counted_against_its_files():
    """ctrl+z stops the scan and its workers together; after `fg` the files they were on are
    not reported as too slow for the time they spent stopped."""
    proc = subprocess.Popen([sys.executable, "-c", _PAUSED], stdout=subprocess.PIPE, env=subprocess_env(),
                            start_new_session=True, bufsize=0)
    try:
        assert first_line(proc).startswith(b"on")  # a worker is on its item
        os.killpg(proc.pid, signal.SIGSTOP)
        time.sleep(2.5)  # the pause itself (what is tested), over twice the 1 s limit
        os.killpg(proc.pid, signal.SIGCONT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert sorted(json.loads(out.splitlines()[-1])) == [[1, "int"], [2, "int"]]
