"""Scan a dataset through a Source (local or SSH) with the record cache in front.

    async for item in scan_dataset(source, path, full=False, rows=64, workers=None, cache=cache):
        if "progress" in item: ...   # {"progress": {files_done, files_total, bytes_*, seconds, ...}}
        else: ...                    # a record (samples/scan.py) with "computed"

Cached records come back with "computed" as the record was first computed and "cached": True.
Closing the iterator early (or cancelling the task) stops the scan where it runs; records
finished so far are in the cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any

from eagle3_tui.scan_cache import ScanCache

FLUSH_EVERY = 500


def cache_host(source) -> str:
    return getattr(source, "where", None) or source.host or "local"


async def scan_dataset(
    source, path: str, *, full: bool = False, rows: int = 64, workers: int | None = None,
    cache: ScanCache | None = None, vocab_mapping: str | None = None,
) -> AsyncIterator[dict[str, Any]]:
    host = cache_host(source)
    root = os.path.abspath(path) if source.host is None else path
    known = cache.known(host, root, full, rows) if cache is not None else {}
    if vocab_mapping is not None:  # records cached without draft-vocabulary counts are scanned again
        known = {rel: k for rel, k in known.items() if '"draft_vocab"' in k[2] or '"error"' in k[2]}
    pending: list[dict[str, Any]] = []
    try:
        async for item in source.scan(
            path, full=full, rows=rows, workers=workers,
            known={rel: (size, mtime) for rel, (size, mtime, _) in known.items()},
            **({"vocab_mapping": vocab_mapping} if vocab_mapping is not None else {}),
        ):
            if item.get("cached"):
                record = json.loads(known[item["path"]][2])
                record["cached"] = True
                yield record
                continue
            if "path" in item and cache is not None:
                pending.append(item)
                if len(pending) >= FLUSH_EVERY:
                    cache.put(host, root, pending, full, rows)
                    pending = []
            yield item
    finally:
        if pending and cache is not None:
            cache.put(host, root, pending, full, rows)
