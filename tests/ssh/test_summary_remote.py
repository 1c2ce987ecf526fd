"""Summaries over SSH equal the local ones, computed on the box by the agent or here after a fetch."""

import asyncio
import math
import sys

import pytest

from eagle3_tui.sources.local import LocalSource
from tests.helpers.ssh import HOSTILE_NAMES, pwned_markers

pytestmark = pytest.mark.asyncio(loop_scope="session")


def same_numbers(a: dict, b: dict) -> bool:
    """Equal apart from where it was computed (floats must match exactly: same code, same data)."""
    a = {k: v for k, v in a.items() if k != "computed"}
    b = {k: v for k, v in b.items() if k != "computed"}
    return a == b


async def test_agent_summary_equals_local_summary(server, shared_box, dataset):
    box = await shared_box()
    assert box.computed == "remote"
    for name in ("data_0.ckpt", "data_1.ckpt", "data_10.ckpt"):
        path = f"{dataset}/rows_0-2000/{name}"
        remote = await box.summarize(path, k=3)
        local = await LocalSource().summarize(path, k=3)
        assert remote["computed"] == "remote" and local["computed"] == "local"
        assert "error" not in remote, remote
        assert same_numbers(remote, local)
    padded = await box.summarize(f"{dataset}/rows_0-2000/data_1.ckpt")
    assert padded["padding"]["trailing"] == 2 and padded["valid_tokens"] == padded["tokens"] - 2


async def test_no_torch_on_the_box_fetches_and_computes_here_with_the_same_numbers(
    server, open_box, shared_box, dataset, python_without_torch
):
    box = await open_box(str(dataset), remote_python=python_without_torch)
    assert box.computed == "local"
    assert [s for s in box.statuses if "no torch" in s] == ["no torch on box: computing locally"]
    path = f"{dataset}/rows_0-2000/data_0.ckpt"
    fallback = await box.summarize(path)
    agent = await (await shared_box()).summarize(path)
    assert fallback["computed"] == "local" and agent["computed"] == "remote"
    assert fallback["path"] == path  # names the remote file, not the cached copy
    assert same_numbers(fallback, agent)
    # the second time comes from the cache; the status line was said once only
    again = await box.summarize(path)
    assert same_numbers(again, agent)
    assert sum("no torch" in s for s in box.statuses) == 1
    assert sum("fetching" in s for s in box.statuses) == 1


async def test_file_problems_come_back_as_error_objects_in_both_modes(server, shared_box, dataset, python_without_torch):
    agent = await shared_box()
    fallback = await shared_box(python_without_torch)
    cases = {
        f"{dataset}/missing.pt": "no such file",
        f"{dataset}/rows_0-2000": "is a folder, not a file",
        f"{dataset}/dead_link.pt": "dead symbolic link",
    }
    for path, words in cases.items():
        local = await LocalSource().summarize(path)
        assert local["error"] == words
        for box in (agent, fallback):
            result = await box.summarize(path)
            assert result["error"] == words and result["path"] == path
    vocab = f"{dataset}/vocab_mapping/vocab_mapping.pt"
    for box in (agent, fallback):
        result = await box.summarize(vocab)
        assert result.get("not_sample") is True
        assert set(result["contents"]) == {"d2t", "t2d"}


async def test_hostile_names_are_summarised_and_nothing_runs(server, shared_box, hostile, python_without_torch):
    agent = await shared_box()
    fallback = await shared_box(python_without_torch)
    for name in HOSTILE_NAMES:
        path = f"{hostile}/{name}"
        local = await LocalSource().summarize(path)
        assert "error" not in local
        for box in (agent, fallback):
            result = await box.summarize(path)
            assert result["path"] == path
            assert same_numbers(result, local), name
    assert pwned_markers(hostile) == []


async def test_norms_are_real_numbers_not_placeholders(server, shared_box, dataset):
    box = await shared_box()
    result = await box.summarize(f"{dataset}/rows_0-2000/data_0.ckpt")
    slot_means = [s["norm_mean"] for s in result["slots"]]
    # slots were written with scale 1, 2, 3: their norms grow in that order
    assert slot_means == sorted(slot_means) and all(math.isfinite(m) and m > 0 for m in slot_means)


async def test_a_cancelled_summary_leaves_the_agent_usable(server, shared_box, dataset, tmp_path):
    from tests.helpers.ssh import write_sample

    box = await shared_box()
    # A summary that ends before the cancel arrives answers with a result: then a bigger file
    # (16 MB, 64 MB, then 256 MB: a loaded machine may finish the middle one first) is tried,
    # until one is stopped part-way.
    for tokens in (1024, 4096, 16384):
        big = tmp_path / f"big_{tokens}.ckpt"
        write_sample(big, seed=9, t=tokens, h=1024)
        late = _LateReplies(box._agent)
        try:
            task = asyncio.create_task(box.summarize(str(big)))
            await asyncio.sleep(0.02)  # the request is on its way; the agent is loading or computing
            if task.done():  # answered before the cancel was sent: nothing to stop, a bigger file
                assert task.result()["tokens"] == tokens
                continue
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            for _ in range(3000):  # the agent's late answer to the cancelled request
                if late.replies:
                    break
                await asyncio.sleep(0.01)
        finally:
            late.restore()
        assert len(late.replies) == 1 and set(late.replies[0]) in ({"id", "error"}, {"id", "result"})
        if "error" in late.replies[0]:
            break
    # the agent stopped that summary part-way: its computation raised Cancelled and said so
    assert late.replies and late.replies[0].get("error", "").startswith("Cancelled"), "no summary was stopped by its cancel"
    # answers keep coming on the same agent, and a later summary of the file is whole
    assert (await box.stat(str(big))).kind == "file"
    result = await box.summarize(str(big))
    assert result["tokens"] == tokens and result["computed"] == "remote"


class _LateReplies(dict):
    """The agent client's table of waiting requests, also keeping replies nobody waits for any
    more (those of cancelled requests), so a test can read what the agent said after a cancel."""

    def __init__(self, agent):
        super().__init__(agent._queues)
        self.agent, self.replies = agent, []
        self._original, agent._queues = agent._queues, self

    def get(self, key, default=None):
        queue = super().get(key, default)
        return queue if queue is not None else _Recorder(self.replies)

    def restore(self):
        self._original.clear()
        self._original.update(self)
        self.agent._queues = self._original


class _Recorder:
    def __init__(self, into):
        self.put_nowait = into.append


async def test_compare_on_the_box_and_after_a_fetch_equals_the_local_comparison(
    server, shared_box, dataset, python_without_torch
):
    a = f"{dataset}/rows_0-2000/data_0.ckpt"
    b = f"{dataset}/rows_0-2000/data_2.ckpt"
    local = await LocalSource().compare(a, b)
    assert "error" not in local and local["findings"]
    for box, where in ((await shared_box(), "remote"), (await shared_box(python_without_torch), "local")):
        result = await box.compare(a, b)
        assert result["computed"] == where
        assert same_numbers(result, local)
    local_missing = await LocalSource().compare(a, f"{dataset}/missing.pt")
    for box in (await shared_box(), await shared_box(python_without_torch)):
        missing = await box.compare(a, f"{dataset}/missing.pt")
        assert same_numbers(missing, local_missing)  # {"a", "b", "error"} naming side B


BLOCKER = '''
import sys

class Block:
    """This box has torch and the standard library only: no numpy, no eagle3_tui installed."""
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "eagle3_tui"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Block())
'''


async def test_the_agent_needs_only_torch_and_the_standard_library(server, open_box, dataset, tmp_path):
    # sitecustomize runs before the agent; the agent's own finder goes in front of it, so only
    # the shipped source can satisfy `import eagle3_tui...`, and numpy is never there.
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    python = f"env PYTHONPATH={tmp_path} {sys.executable}"
    box = await open_box(str(dataset), remote_python=python)
    path = f"{dataset}/rows_0-2000/data_0.ckpt"
    result = await box.summarize(path)
    assert result["computed"] == "remote", box.statuses
    assert same_numbers(result, await LocalSource().summarize(path))
