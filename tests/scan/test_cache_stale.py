"""Issue 44, item 3: the record cache never answers for a file that changed. A sample rewritten
with the same size and its mtime put back (`touch -r`, a copy tool that keeps times) is read
again, here and over SSH (the box's agent lists inode and ctime too)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from eagle3_tui.dataset.cache import ScanCache
from eagle3_tui.dataset.stream import scan_dataset
from tests.scan.test_engine import copy_dataset, scan_json


def _rewrite_louder(path: Path) -> None:
    """The same sample with hidden states 10 times larger: same size on disk, mtime put back."""
    st = path.stat()
    d = torch.load(path, weights_only=True)
    for key, value in d.items():
        if key.endswith("hidden_state") or key.endswith("hidden_states"):
            d[key] = value * 10
    torch.save(d, path)
    assert path.stat().st_size == st.st_size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _norms(record: dict) -> float:
    return record["final"]["norm_bulk"]


def test_a_sample_rewritten_with_its_size_and_mtime_kept_is_read_again(clean, tmp_path, capsys):
    root = copy_dataset(clean, tmp_path / "ds")
    target = sorted(root.rglob("*.ckpt"))[4]
    rel = str(target.relative_to(root))
    before, _ = scan_json(capsys, root, "--workers", "1")
    _rewrite_louder(target)
    after, last = scan_json(capsys, root, "--workers", "1")
    fresh, _ = scan_json(capsys, root, "--workers", "1", "--no-cache")
    pick = lambda records: next(r for r in records if r["path"] == rel)  # noqa: E731
    assert not pick(after).get("cached") and _norms(pick(after)) == _norms(pick(fresh))
    assert _norms(pick(after)) != _norms(pick(before))
    assert last["summary"]["cached"] == len(before) - 1
    again, _ = scan_json(capsys, root, "--workers", "1")  # and the scan after that is not stale either
    assert pick(again).get("cached") and _norms(pick(again)) == _norms(pick(fresh))


@pytest.mark.asyncio(loop_scope="session")
async def test_over_ssh_a_rewrite_with_size_and_mtime_kept_is_read_again(server, shared_box, clean, tmp_path):
    root = copy_dataset(clean, tmp_path / "ds")
    target = sorted(root.rglob("*.ckpt"))[4]
    rel = str(target.relative_to(root))
    box = await shared_box()
    cache = ScanCache(tmp_path / "cache.sqlite")
    first = {r["path"]: r async for r in scan_dataset(box, str(root), cache=cache) if "progress" not in r}
    assert first[rel]["stamp"]  # the agent lists it
    _rewrite_louder(target)
    second = {r["path"]: r async for r in scan_dataset(box, str(root), cache=cache) if "progress" not in r}
    cache.close()
    assert not second[rel].get("cached") and second[rel]["computed"] == "remote"
    assert _norms(second[rel]) != _norms(first[rel])
    assert sum(bool(r.get("cached")) for r in second.values()) == len(second) - 1
