"""Scan a dataset through a Source (local or SSH) with the record cache in front.

    async for item in scan_dataset(source, path, ScanOptions(...), cache=cache):
        if "progress" in item: ...   # {"progress": {files_done, files_total, bytes_*, seconds, ...}}
        else: ...                    # a record (engines/scan/records.py) with "computed"

Cached records come back with "computed" as the record was first computed and "cached": True.
With lazy=True a cached record that is not an error comes back undecoded, as
{"path", "size", "mtime", "mode", "variant", "cached": True, "raw": record JSON text}: enough for counts,
the findings cache and printing the line as it was stored; full_record(r) decodes it.
Closing the iterator early (or cancelling the task) stops the scan where it runs; records
finished so far are in the cache.

    findings = findings_for(source, path, records, cache, options)   # dataset_findings, cached

The findings of a complete scan are kept too, keyed by a digest of the records: a second scan of
an unchanged dataset computes nothing (and never imports torch).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import AsyncGenerator
from functools import partial
from typing import cast

from eagle3_tui.dataset.cache import ScanCache
from eagle3_tui.dataset.findings import dataset_findings as judge
from eagle3_tui.dataset.shapes import DatasetRecord, LayerSearch
from eagle3_tui.engines.results.findings import Finding
from eagle3_tui.engines.results.scan import RecordPrint, ScanProgressItem
from eagle3_tui.engines.scan.options import ScanOptions
from eagle3_tui.sources.base import Source

FLUSH_EVERY = 500


def cache_host(source: Source) -> str:
    return source.where


async def scan_dataset(
    source: Source, path: str, options: ScanOptions | None = None, *, cache: ScanCache | None = None, lazy: bool = False,
    skip: dict[str, tuple[int | None, float | None, str | None]] | None = None,
) -> AsyncGenerator[DatasetRecord | ScanProgressItem, None]:
    """skip: rel -> (size, mtime, stamp) of files this caller has already (a scan resumed after a lost
    connection): unchanged, they are neither read again nor yielded.
    options.pair: records carry their pairing print (engines/scan/pairprint.py), cached ones
    too (a cached record without one is read again)."""
    options = options or ScanOptions()
    skip = skip or {}
    full, rows, budget, pair = options.full, options.rows, options.budget, options.pair
    host = cache_host(source)
    root = os.path.abspath(path) if source.host is None else path
    if options.drafter_pair is not None:
        cache = None  # cached records carry no drafter figures: every file is read again
    known = cache.known(host, root, full, rows, budget, pair=pair) if cache is not None else {}
    pending: list[DatasetRecord] = []
    told: dict[str, tuple[int, float | None, str | None, str | None]] = {
        rel: (k[0], k[1], "*" if k[4] else k[5], k[6]) for rel, k in known.items()}
    told.update((rel, (size, mtime, "*", stamp)) for rel, (size, mtime, stamp) in skip.items() if size is not None)
    prints: dict[str, RecordPrint] | None = None
    try:
        async for got in source.scan(path, **options.as_request(), known=told):
            # a TypedDict union is not narrowed by a key (mypy narrows @final ones only): said here, once
            if "progress" in got:  # the scan's progress, passed on
                yield cast("ScanProgressItem", got)
                continue
            # a record; the keys DatasetRecord adds to a ScanRecord are set here and by the cache
            item = cast("DatasetRecord", got)
            if item.get("path") in skip:
                continue
            if item.get("cached"):
                record = _from_cache(item["path"], known[item["path"]], lazy)
                if pair and cache is not None:
                    if prints is None:
                        prints = cache.pairs(host, root, full, rows, budget)
                    if item["path"] in prints:
                        record["pair"] = prints[item["path"]]
                yield record
                continue
            if "path" in item and cache is not None:
                pending.append(item)
                if len(pending) >= FLUSH_EVERY:
                    cache.put(host, root, pending, full, rows, budget)
                    pending = []
            yield item
    finally:
        if pending and cache is not None:
            cache.put(host, root, pending, full, rows, budget)


def _from_cache(rel: str, known: tuple[int, float, str, str, bool, str | None, str | None], lazy: bool) -> DatasetRecord:
    """The cached record of `rel`, its path and shard relative to this scan's root (the record
    may have been stored by a scan of a folder above or below it)."""
    size, mtime, text, mode, error, variant, stamp = known
    if not text.startswith(f'{{"path": {json.dumps(rel)}, '):
        record = json.loads(text)
        record.update(path=rel, shard=rel.rsplit("/", 1)[0] if "/" in rel else "")
        text = json.dumps(record)
    if lazy and not error:
        return {"path": rel, "size": size, "mtime": mtime, "stamp": stamp,
                "mode": "full" if mode.startswith("full") else "quick", "variant": variant, "cached": True, "raw": text}
    decoded: DatasetRecord = json.loads(text)
    decoded["cached"] = True
    decoded["stamp"] = stamp
    return decoded


def full_record(record: DatasetRecord) -> DatasetRecord:
    """The decoded record behind a lazy cached one (scan_dataset(lazy=True)); others as they are."""
    if "raw" not in record:
        return record
    full: DatasetRecord = json.loads(record["raw"])
    full["cached"] = True
    return full


def findings_for(source: Source, path: str, records: list[DatasetRecord], cache: ScanCache | None = None,
                 options: ScanOptions | None = None,
                 layer_runs: LayerSearch | None = None) -> list[Finding]:
    """dataset_findings(records), from the cache when the same records were judged before.
    Pass cache=None for a partial (cancelled) scan: its findings are not worth keeping.
    layer_runs: see dataset_findings (the TUI runs the torch part in a child process)."""


    dataset_findings = partial(judge, layer_runs=layer_runs)
    if cache is None:
        return dataset_findings([full_record(r) for r in records])
    host = cache_host(source)
    root = os.path.abspath(path) if source.host is None else path
    try:
        digest = cache.digest(records, options)
        found = cache.findings(host, root, digest)
    except sqlite3.Error:  # a broken cache costs time, never the answer
        return dataset_findings([full_record(r) for r in records])
    if found is None:
        found = dataset_findings([full_record(r) for r in records])
        try:
            cache.put_findings(host, root, digest, found)
        except sqlite3.Error:
            pass
    return found
