"""The browser's scan marks: ok / warning / error for the files of the open folder that a
dataset scan has records of (in the record cache), read with one query per folder listing.

Runs in a worker thread (the cache is SQLite); a record whose size or mtime no longer matches
the listing is stale and gives no mark.
"""

from __future__ import annotations

import json
import os

from eagle3_tui.sources.base import Entry
from eagle3_tui.ui.dataset_model import status_of

#: mtimes from a remote listing and from the box's scan may differ in their fraction
MTIME_SLACK = 1.0


def scan_marks(host: str, folder: str, local: bool, entries: list[Entry]) -> dict[str, str]:
    """name -> "ok" | "warning" | "error" for the scanned files among `entries`."""
    from eagle3_tui.dataset.cache import ScanCache

    if local:
        folder = os.path.abspath(folder)
    cache = ScanCache()
    try:
        known = cache.in_folder(host, folder)
    finally:
        cache.close()
    if not known:
        return {}
    marks: dict[str, str] = {}
    for e in entries:
        hit = known.get(e.name)
        if hit is None or e.kind != "file":
            continue
        size, mtime, text = hit
        if size != e.size or (e.mtime is not None and mtime is not None and abs(mtime - e.mtime) > MTIME_SLACK):
            continue
        try:
            status = status_of(json.loads(text))
        except (ValueError, KeyError, TypeError):
            continue
        if status is not None:
            marks[e.name] = status
    return marks
