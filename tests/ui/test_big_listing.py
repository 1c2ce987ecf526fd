"""A folder too big to sort in one go: thousands of entries stream in pages, are merged in
chunks off the event loop, and must still come out in natural order, directories first, with
nothing lost or doubled; a big listing is frozen out of the garbage collector, and leaving the
folder must still free it."""

from __future__ import annotations

import gc
import random
import weakref

from eagle3_tui.sources.base import Entry
from eagle3_tui.ui.browser import listing_stream
from eagle3_tui.ui.browser.listing import SORT_CHUNK, merge_batch, sort_key
from tests.helpers.tui import make_app, wait_until


def test_batches_of_many_chunks_merge_into_natural_order():
    rng = random.Random(7)
    names = [f"data_{i}.ckpt" for i in range(3 * SORT_CHUNK + 17)] + ["Data_5.ckpt", "data_05.ckpt"]
    entries = [Entry(n, "file", 1) for n in names] + [Entry(f"rows_{i * 2000}-{i * 2000 + 2000}", "dir")
                                                      for i in range(40)]
    rng.shuffle(entries)
    keys: list[tuple] = []
    merged: list[Entry] = []
    # uneven batches: a single entry, one under a chunk, several chunks, the rest
    for size in (1, SORT_CHUNK - 1, 2 * SORT_CHUNK + 3, len(entries)):
        batch, entries = entries[:size], entries[size:]
        before = list(merged)
        keys, merged = merge_batch(keys, merged, batch)
        assert len(before) + len(batch) == len(merged)
    expected = sorted(merged, key=sort_key)
    assert merged == expected and keys == [sort_key(e) for e in expected]
    assert [e.name for e in merged[:3]] == ["rows_0-2000", "rows_2000-4000", "rows_4000-6000"]
    assert [e.name for e in merged if e.kind == "file"][:4] == [
        "data_0.ckpt", "data_1.ckpt", "data_2.ckpt", "data_3.ckpt"]


async def test_big_folder_streams_in_order_and_is_freed_when_left(tmp_path, monkeypatch):
    monkeypatch.setattr(listing_stream, "FREEZE_FROM", 1000)  # freeze from the second merge on
    big = tmp_path / "big"
    big.mkdir()
    count = 4000
    for i in range(count):
        (big / f"data_{i}.ckpt").touch()
    for i in range(3):
        (big / f"shard_{i}").mkdir()
    app = make_app(big)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            main = app.main_screen
            await wait_until(pilot, lambda: main.listing_done, what="the big listing")
            names = [e.name for e in main.browser.entries]
            assert names == ["shard_0", "shard_1", "shard_2"] + [f"data_{i}.ckpt" for i in range(count)]
            assert main.browser.current.name == "shard_0"  # the first screen reads from the top
            gone = weakref.ref(main.browser.entries[-1])
            await pilot.press("enter")  # into shard_0: the big listing is dropped
            await wait_until(pilot, lambda: main.listing_done and main.path.endswith("shard_0"),
                             what="the shard folder")
            gc.collect()
            assert gone() is None, "the big folder's entries stayed in memory after leaving it"
    finally:
        gc.unfreeze()  # the test run's other objects go back to the collector
