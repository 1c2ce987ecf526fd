"""SFTP fetch: progress, a cache keyed by host/path/size/mtime, cancellation without leftovers."""

import asyncio
import os

import pytest

from eagle3_tui.sources.base import SourceError
from eagle3_tui.userdirs import cache_dir

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture
def big_file(tmp_path):
    path = tmp_path / "remote" / "big.pt"
    path.parent.mkdir()
    path.write_bytes(os.urandom(24 * 2**20))
    return path


async def test_fetch_reports_progress_and_copies_exactly(server, shared_box, big_file, tmp_path):
    box = await shared_box()
    seen = []
    dest = tmp_path / "copy.pt"
    await box.fetch(str(big_file), dest, progress=lambda done, total: seen.append((done, total)))
    assert dest.read_bytes() == big_file.read_bytes()
    size = big_file.stat().st_size
    assert len(seen) > 3 and seen[-1] == (size, size)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert not list(tmp_path.glob("*.partial"))


async def test_cancelled_fetch_leaves_no_file_behind(server, shared_box, big_file, tmp_path):
    box = await shared_box()
    dest = tmp_path / "copy.pt"
    started = asyncio.Event()
    task = asyncio.create_task(box.fetch(str(big_file), dest, progress=lambda d, t: started.set()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not dest.exists() and not list(tmp_path.glob("*.partial"))
    # the connection is still good afterwards
    assert (await box.stat(str(big_file))).size == big_file.stat().st_size


async def test_cache_is_reused_until_the_file_changes(server, open_box, big_file, python_without_torch, tmp_path):
    # A small real sample, so the local computation has something to summarise.
    from tests.helpers.ssh import write_sample

    sample = big_file.parent / "data_0.ckpt"
    write_sample(sample, seed=5)
    box = await open_box(str(big_file.parent), remote_python=python_without_torch)
    first = await box.summarize(str(sample))
    again = await box.summarize(str(sample))
    assert first == again
    assert sum("fetching" in s for s in box.statuses) == 1
    write_sample(sample, seed=6)  # same size, new content and mtime: must be fetched again
    os.utime(sample, (1, 1))
    changed = await box.summarize(str(sample))
    assert sum("fetching" in s for s in box.statuses) == 2
    assert changed["slots"][0]["norm_mean"] != first["slots"][0]["norm_mean"]
    cached = [p for p in (cache_dir() / "sftp").rglob("data_0.ckpt")]
    assert len(cached) == 2


async def test_fetch_of_a_missing_file_is_one_line(server, shared_box, tmp_path):
    box = await shared_box()
    with pytest.raises(SourceError) as err:
        await box.fetch(str(tmp_path / "nope.pt"), tmp_path / "x")
    assert str(err.value) == f"box:{tmp_path}/nope.pt: no such file or folder"


async def test_a_fetch_cut_mid_transfer_is_retried_and_completes(server, open_box, big_file, tmp_path):
    box = await open_box(str(big_file.parent))
    dest = tmp_path / "copy.pt"
    cut = []

    def progress(done, total):
        if not cut and done > total // 4:
            cut.append(done)
            server.drop_connections()

    await box.fetch(str(big_file), dest, progress=progress)
    assert cut, "the transfer was never cut"
    assert dest.read_bytes() == big_file.read_bytes()
    assert "connection lost, reconnecting (1/5)…" in box.statuses
    assert not list(tmp_path.glob("*.partial"))
