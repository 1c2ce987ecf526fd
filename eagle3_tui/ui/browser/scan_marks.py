"""The browser's scan marks: ok / warning / error for the files of the open folder that a
dataset scan has records of (in the record cache), read with one query per folder listing, by
the dataset view's rule (dataset/marks.py): the file on its own, raised by the findings over the
folder that name it (those of the dataset view's scan of this folder when the cache has them).

Runs in a worker thread (the cache is SQLite); a record whose size or mtime no longer matches
the listing is stale and gives no mark.
"""

from __future__ import annotations

import json
import os

from eagle3_tui.dataset.marks import folder_marks, status_of
from eagle3_tui.sources.base import Entry

#: mtimes from a remote listing and from the box's scan may differ in their fraction
MTIME_SLACK = 1.0


def scan_marks(host: str, folder: str, local: bool, entries: list[Entry]) -> dict[str, str]:
    """name -> "ok" | "warning" | "error" for the scanned files among `entries`."""
    from eagle3_tui.dataset.cache import ScanCache  # lazy: the record cache (sqlite3), in a worker

    if local:
        folder = os.path.abspath(folder)
    cache = ScanCache()
    try:
        known = cache.in_folder(host, folder)
        stored = cache.last_findings(host, folder) if known else None
    finally:
        cache.close()
    if not known:
        return {}
    records = []
    for e in entries:
        hit = known.get(e.name)
        if hit is None or e.kind != "file":
            continue
        size, mtime, text = hit
        if size != e.size or (e.mtime is not None and mtime is not None and abs(mtime - e.mtime) > MTIME_SLACK):
            continue
        try:
            r = json.loads(text)
            status_of(r)  # a record the rule cannot read gives no mark
        except (ValueError, KeyError, TypeError):
            continue
        r["path"], r["shard"] = e.name, "."  # as a scan of this folder names them
        records.append(r)
    if len(records) != len(known):
        stored = None  # the dataset view's findings were of other files (changed since, or gone)
    return folder_marks(records, stored)
