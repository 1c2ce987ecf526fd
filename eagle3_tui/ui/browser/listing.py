"""Natural-order merging of streamed folder pages, shaped so the event loop never stalls.

A page arrives in arrival order (scandir's, or the SFTP server's). Re-sorting the whole
listing for every page costs O(n log n) each time, in one C call that holds the GIL, so a
100,000-entry folder froze key presses for seconds. Here a batch is sorted on its own and
then spliced into the existing order with one bisect per new entry and C-speed slice copies,
in a worker thread that pauses between chunks. The UI receives finished (keys, entries)
lists and only swaps references.
"""

from __future__ import annotations

import heapq
import time
from bisect import bisect_right
from collections.abc import Iterable
from operator import itemgetter

from eagle3_tui.sources.base import Entry, NaturalListing

sort_key = NaturalListing.key  # directories first, then natural order of names


#: entries sorted in one C call: a sort holds the GIL throughout, so it is kept to a few ms
SORT_CHUNK = 512
#: new entries spliced in between two pauses (a bisect and a slice copy each)
SPLICE_STEP = 256


def merge_batch(
    keys: list[tuple], entries: list[Entry], batch: list[Entry], *, pause: float = 0.0
) -> tuple[list[tuple], list[Entry]]:
    """New (keys, entries) lists: `batch` merged into the sorted lists (which are not modified).

    Run in a worker thread with `pause` > 0: sleeping between steps hands the GIL to the
    event loop at once instead of after the interpreter's 5 ms switch interval, so a frame
    or a key press never queues behind the merge. The batch is sorted as runs of SORT_CHUNK,
    and the runs are merged (heapq.merge: a step per entry, nothing holds the GIL for long)
    straight into one splice, so the listing is copied once per batch, not once per chunk
    (which at 100,000 entries was most of the merge, and kept the garbage collector walking
    freshly copied lists).
    """
    if not batch:
        return keys, entries
    runs = []
    for start in range(0, len(batch), SORT_CHUNK):
        chunk = batch[start:start + SORT_CHUNK]
        runs.append(sorted(zip(map(sort_key, chunk), chunk, strict=True), key=_first))
        _pause(pause)
    keyed = runs[0] if len(runs) == 1 else heapq.merge(*runs, key=_first)
    return _splice(keys, entries, keyed, pause)


def _pause(seconds: float) -> None:
    if seconds:
        time.sleep(seconds)


def _splice(
    keys: list[tuple], entries: list[Entry], keyed: Iterable[tuple[tuple, Entry]], pause: float
) -> tuple[list[tuple], list[Entry]]:
    out_keys: list[tuple] = []
    out_entries: list[Entry] = []
    start = 0
    for n, (key, entry) in enumerate(keyed, 1):
        i = bisect_right(keys, key, start)
        if i > start:
            out_keys += keys[start:i]
            out_entries += entries[start:i]
            start = i
        out_keys.append(key)
        out_entries.append(entry)
        if n % SPLICE_STEP == 0:
            _pause(pause)
    out_keys += keys[start:]
    out_entries += entries[start:]
    return out_keys, out_entries


_first = itemgetter(0)


def merge_due(pending: int, have: int, page_size: int) -> bool:
    """Merge when the new entries are a quarter of what is shown: O(n log n) work in total."""
    return have == 0 or pending >= max(page_size, have // 4)
