"""Natural-order merging of streamed folder pages, shaped so the event loop never stalls.

A page arrives in arrival order (scandir's, or the SFTP server's). Re-sorting the whole
listing for every page costs O(n log n) each time, in one C call that holds the GIL, so a
100,000-entry folder froze key presses for seconds. Here a batch is sorted on its own and
then spliced into the existing order with one bisect per new entry and C-speed slice copies,
in a worker thread that pauses between chunks. The UI receives finished (keys, entries)
lists and only swaps references.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from operator import itemgetter

from eagle3_tui.sources.base import Entry, NaturalListing

sort_key = NaturalListing.key  # directories first, then natural order of names


#: entries sorted in one C call: a sort holds the GIL throughout, so it is kept to a few ms
SORT_CHUNK = 512


def merge_batch(
    keys: list[tuple], entries: list[Entry], batch: list[Entry], *, pause: float = 0.0
) -> tuple[list[tuple], list[Entry]]:
    """New (keys, entries) lists: `batch` merged into the sorted lists (which are not modified).

    Run in a worker thread with `pause` > 0: sleeping between chunks hands the GIL to the
    event loop at once instead of after the interpreter's 5 ms switch interval, so a frame
    or a key press never queues behind the merge.
    """
    for start in range(0, len(batch), SORT_CHUNK):
        keyed = sorted(((sort_key(e), e) for e in batch[start:start + SORT_CHUNK]),
                       key=itemgetter(0))
        keys, entries = _splice(keys, entries, keyed)
        if pause:
            time.sleep(pause)
    return keys, entries


def _splice(
    keys: list[tuple], entries: list[Entry], keyed: list[tuple[tuple, Entry]]
) -> tuple[list[tuple], list[Entry]]:
    out_keys: list[tuple] = []
    out_entries: list[Entry] = []
    start = 0
    for key, entry in keyed:
        i = bisect_right(keys, key, start)
        if i > start:
            out_keys += keys[start:i]
            out_entries += entries[start:i]
            start = i
        out_keys.append(key)
        out_entries.append(entry)
    out_keys += keys[start:]
    out_entries += entries[start:]
    return out_keys, out_entries


def merge_due(pending: int, have: int, page_size: int) -> bool:
    """Merge when the new entries are a quarter of what is shown: O(n log n) work in total."""
    return have == 0 or pending >= max(page_size, have // 4)
