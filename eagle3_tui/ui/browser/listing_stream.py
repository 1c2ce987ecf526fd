"""Reading folders from a Source for the browser, off the event loop: the streamed listing and
the n/p walk into the next shard folder. Each posts messages (ui/browser/messages.py); the main screen
runs them as workers and decides what is shown."""

from __future__ import annotations

import asyncio
import gc
import posixpath
from collections.abc import Callable
from time import monotonic

from textual.message import Message
from textual.worker import get_current_worker

from eagle3_tui.sources.base import Entry, NaturalListing, Source, SourceError
from eagle3_tui.ui.browser.listing import merge_batch, merge_due
from eagle3_tui.ui.browser.messages import ListingDone, ListingPage, ShardsFound
from eagle3_tui.ui.browser.paths import parent_folder, sample_at_end, shard_pattern

PAGE_SIZE = 500
#: the listing merge thread sleeps this long between chunks, giving the event loop the GIL
MERGE_PAUSE_SECONDS = 0.002
#: listings this long are frozen out of the garbage collector (see _merge)
FREEZE_FROM = 10_000

Post = Callable[[Message], object]


async def stream_listing(source: Source, path: str, generation: int, post: Post) -> None:
    """Read pages, merge them into natural order off the event loop, post the result.

    The first page goes out at once (the first screen); later ones are merged when they
    add a quarter to what is shown, or every half second, so the merging costs
    O(n log n) in total and a key press never waits behind it. Run as a worker.
    """
    worker = get_current_worker()
    keys: list[tuple] = []
    entries: list = []
    pending: list = []
    last = monotonic()

    async def publish() -> None:
        nonlocal keys, entries, pending, last
        keys, entries = await asyncio.to_thread(_merge, keys, entries, pending)
        pending, last = [], monotonic()
        if not worker.is_cancelled:
            post(ListingPage(generation, keys, entries))

    try:
        async for page in source.list_pages(path, PAGE_SIZE):
            if worker.is_cancelled:
                return
            pending.extend(page)
            if merge_due(len(pending), len(entries), PAGE_SIZE) or monotonic() - last > 0.5:
                await publish()
        if pending:
            await publish()
    except SourceError as err:
        post(ListingDone(generation, error=str(err)))
        return
    except Exception as err:  # noqa: BLE001 - a bug must not leave the browser "listing…" for ever
        post(ListingDone(generation, error=f"listing failed: {type(err).__name__}: {str(err)[:200]}"))
        return
    if not worker.is_cancelled:
        post(ListingDone(generation))


def _merge(keys: list[tuple], entries: list, pending: list) -> tuple[list[tuple], list]:
    merged = merge_batch(keys, entries, pending, pause=MERGE_PAUSE_SECONDS)
    if len(merged[1]) < FREEZE_FROM:
        return merged
    # the entries live as long as the folder is shown: without this, each full collection
    # walks all of them again, holding the GIL (pauses of 100-350 ms at 100,000 entries,
    # growing with the folder). Frozen objects are still freed by reference counting.
    gc.collect(1)  # young garbage first (frozen cycles are never freed)
    gc.freeze()
    return merged


async def find_shard_sample(source: Source, origin: str, step: int, text_filter: str) -> ShardsFound:
    """The nearest shard folder after (step 1) or before (step -1) `origin` holding a sample.

    Only the parent and the shard folders up to the first one holding a sample are listed;
    the listing found is handed on, so the screen does not list that folder a second time.
    """
    parent, here = parent_folder(origin), posixpath.basename(origin.rstrip("/"))
    pattern, key = shard_pattern(here), NaturalListing.key(Entry(here, "dir"))
    skipped: list[str] = []
    try:
        siblings = [e.name for e in await source.list_all(parent)
                    if e.kind == "dir" and shard_pattern(e.name) == pattern]
        if step > 0:
            names = [n for n in siblings if NaturalListing.key(Entry(n, "dir")) > key]
        else:
            names = [n for n in reversed(siblings) if NaturalListing.key(Entry(n, "dir")) < key]
        for name in names:
            folder = posixpath.join(parent, name)
            entries = await source.list_all(folder)
            select = sample_at_end(entries, step, text_filter)
            if select is not None:
                keys = [NaturalListing.key(e) for e in entries]
                return ShardsFound(origin, step, skipped, folder, keys, entries, select)
            skipped.append(name)  # no sample in it (an empty shard): on to the next
    except SourceError as err:
        return ShardsFound(origin, step, skipped, error=str(err))
    except Exception as err:  # noqa: BLE001 - said in the status line; n/p work again
        return ShardsFound(origin, step, skipped, error=f"looking for the next shard failed: "
                                                       f"{type(err).__name__}: {str(err)[:200]}")
    return ShardsFound(origin, step, skipped)
