"""Pair an inference capture with the training samples that hold its prompt (`eagle3-tui pair`,
the TUI's `P`), from the dataset's scan records alone: a second pairing on an unchanged dataset
reads no sample (the records come from the cache, dataset/cache.py).

    result = await pair_capture(source, "infer/cap.pt", "train/")
    result == {"capture": "infer/cap.pt", "matches": [{"path", "shared_tokens", "how", "score",
               "relation"}, ...], "files": N, "files_read": n, "bytes_read": b}

By token ids when the capture has them and the records do (engines/scan/pairprint.py keeps the
first PAIR_IDS ids and digests of longer heads): "exact" (the same ids), "prefix" (the capture's
ids begin the sample), "holds" (the sample's ids begin the capture: decoded tokens past it, padding
taken for tokens), else "head" (a shared head, then they part). Score: the larger of the shared
head's share of the capture and the share of the capture's id pairs (bigrams) the sample also
holds, so a template that inserts one token still pairs with its sample.

Else by hidden states (how "states"): the capture's rows at the record's positions, cut to the
record's width, against the record's projected rows; each capture part takes the record part it
agrees with best (slots permuted or one layer off still pair), the score is the mean cosine, and
shared_tokens counts the leading rows that agree (at least: only some positions are kept).
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Callable
from itertools import pairwise
from typing import TypedDict

from eagle3_tui.dataset.cache import ScanCache
from eagle3_tui.dataset.shapes import DatasetRecord
from eagle3_tui.dataset.stream import scan_dataset
from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.results.scan import CapturePrint, RecordPrint, ScanProgressData
from eagle3_tui.engines.scan.options import ScanOptions
from eagle3_tui.engines.scan.pairprint import PAIR_IDS, PROJ, decode_ids, ids_digest
from eagle3_tui.sources.base import Source


class Match(TypedDict, total=False):
    path: str  # the training sample (rank adds it)
    shared_tokens: int
    how: str  # "ids" | "states"
    score: float
    relation: str  # "exact" | "prefix" | "holds" | "head" | "states"
    loss_ones: int | None  # the sample's rows with loss (None: it has no loss mask, as an engine's capture)


class PairResult(TypedDict, total=False):
    """`pair --json`: the capture, the dataset, the best matches (or "error")."""

    capture: str
    dataset: str
    matches: list[Match]
    error: str
    computed: str | None
    capture_ids: bool
    capture_tokens: int
    paired_by: str
    capture_loss_ones: int | None  # the capture's own rows with loss, when it lies in the dataset
    sample_capture: Match | None  # pair_either on a training sample: the capture that pairs with it (its
    # figures as the capture's own pairing gives them), or None
    capture_ids_blank: str  # why the capture's ids carry no information (engines/read/sample.py blank_ids)
    files: int
    files_read: int
    bytes_read: int
    tie: int  # matches that share the first place (same score, same shared tokens)
    refused: int  # files a torch below 2.10 would not load (engines/read/torch_gate.py)
    refusal: str  # the first one's line

#: cosine (of projected rows) from which a row of the capture counts as the sample's row
ROW_AGREES = 0.9
#: matches listed by default
TOP = 5


# ----------------------------------------------------------------------------- by ids


def _head(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def match_ids(cap: list[int], p: RecordPrint) -> Match | None:
    """How the capture's valid ids `cap` meet a record's "pair" field, or None (nothing shared)."""
    rec = decode_ids(p.get("ids"))
    if rec is None or not cap:
        return None
    n_c, n_r = len(cap), int(p["n"])
    head = _head(cap, rec)
    if head == len(rec) and n_r > len(rec):  # the kept ids all agree: the digests of longer heads
        for length, digest in sorted(((int(k), v) for k, v in (p.get("heads") or {}).items())):
            if length <= n_c and ids_digest(cap[:length]) == digest:
                head = length
    if n_r <= n_c and ids_digest(cap[:n_r]) == p.get("ids_hash"):
        head = n_r
    relation = ("exact" if head == n_c == n_r else "prefix" if head == n_c else
                "holds" if head == n_r else "head")
    c2 = set(pairwise(cap[:PAIR_IDS]))
    r2 = set(pairwise(rec))
    overlap = len(c2 & r2) / len(c2) if c2 else 0.0
    score = max(head / n_c, overlap)
    if head == 0 and overlap < 0.5:
        return None
    return {"shared_tokens": head, "how": "ids", "score": round(score, 4), "relation": relation}


# ----------------------------------------------------------------------------- by states


def _rows(text: str, parts: int, n_pos: int):
    import torch  # lazy: torch, only to compare a capture's rows

    raw = bytearray(base64.b64decode(text))
    return torch.frombuffer(raw, dtype=torch.int8).view(parts, n_pos, PROJ).float()


def _unit(x):
    return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-6)


def match_states(capture: CapturePrint, p: RecordPrint) -> Match | None:
    """How the capture's projected rows meet a record's, or None (no width in common)."""
    widths = p.get("w") or []
    rows = p.get("rows")
    if not rows or not capture.get("pos"):
        return None
    # the record's positions the capture reaches (it keeps every row: pairprint.capture_print)
    reach = len(capture["pos"])
    at = [i for i, q in enumerate(p["pos"]) if q < reach]
    if not at:
        return None
    rec = _unit(_rows(rows, len(widths), len(p["pos"]))[:, at])
    cap_at = [p["pos"][i] for i in at]
    best = None
    for w in sorted(set(widths)):
        text = capture["rows"].get(str(w))
        if text is None:
            continue
        raw = base64.b64decode(text)
        cap = _unit(_rows(text, len(raw) // (reach * PROJ), reach)[:, cap_at])
        mine = rec[[i for i, x in enumerate(widths) if x == w]]
        cos = (cap[:, None] * mine[None]).sum(-1)  # [capture parts, record parts, rows]
        pick = cos.mean(-1).argmax(1)  # each capture part: the record part it agrees with best
        per_row = cos[range(cos.shape[0]), pick].mean(0)
        score = float(per_row.mean())
        if best is None or score > best[0]:
            best = (score, per_row)
    if best is None:
        return None
    score, per_row = best
    agree = (per_row >= ROW_AGREES).tolist()
    run = agree.index(False) if False in agree else len(agree)
    shared = min(capture["n"], int(p["n"])) if run == len(agree) else (cap_at[run - 1] + 1 if run else 0)
    return {"shared_tokens": shared, "how": "states", "score": round(score, 4), "relation": "states"}


# ----------------------------------------------------------------------------- ranking


def rank(capture: CapturePrint, records: list[DatasetRecord], *, top: int = TOP,
         exclude: frozenset[str] = frozenset()) -> list[Match]:
    """The best `top` matches of a capture (pairprint.capture_print) among scan records."""
    usable = [r for r in records if r.get("pair") and r["path"] not in exclude]
    cap_ids = capture.get("ids")
    found: list[Match] = []
    if cap_ids and any(r["pair"].get("ids") for r in usable):
        found = [{"path": r["path"], **m} for r in usable if (m := match_ids(cap_ids, r["pair"]))]
    if not found:
        found = [{"path": r["path"], **m} for r in usable if (m := match_states(capture, r["pair"]))]
    found.sort(key=lambda m: (-m["score"], -m["shared_tokens"], m["path"]))
    return found[:top]


def widths_of(records: list[DatasetRecord]) -> list[int]:
    return sorted({w for r in records for w in ((r.get("pair") or {}).get("w") or [])})


def relative_to(root: str, path: str) -> str | None:
    """`path` relative to the dataset `root` when it lies inside it (the capture is then left out)."""
    rel = os.path.relpath(path, root)
    return None if rel.startswith("..") or os.path.isabs(rel) else rel


async def pair_capture(source: Source, capture: str, dataset: str, *, top: int = TOP, use_cache: bool = True,
                       exclude: frozenset[str] = frozenset(), skip_folder: bool = False,
                       progress: Callable[[ScanProgressData], None] | None = None) -> PairResult:
    """Scan `dataset` (cached records stand for unchanged files), print the capture next to the
    data (Source.pair_print) and rank. The capture itself is never a match; with skip_folder,
    nothing in its folder is (the TUI's P: the other captures there are no training samples).
    progress: called with the scan's progress dicts (files_done, files_total, bytes_read, ...).
    Raises SourceError when a side cannot be read."""
    records, read, bytes_read = await _scan(source, dataset, use_cache, progress)
    return await _pair(source, capture, dataset, records, top=top, exclude=exclude, skip_folder=skip_folder,
                       read=read, bytes_read=bytes_read)


async def pair_either(source: Source, path: str, dataset: str, *,
                      progress: Callable[[ScanProgressData], None] | None = None) -> PairResult:
    """The TUI's P on `path`, a capture or a training sample: pair_capture's answer, with
    "sample_capture" when `path` is a training sample. It is one when it has loss on in its loss mask
    and files with no loss mask (no engine's capture has one) match it; its capture is the first of
    the TOP best of those whose own pairing ranks `path` first (ties included), else None: a capture
    that only shares a system prompt pairs better with its own sample."""
    records, read, bytes_read = await _scan(source, dataset, True, progress)
    result = await _pair(source, path, dataset, records, top=len(records), skip_folder=True, read=read,
                         bytes_read=bytes_read)
    candidates = [m for m in result.get("matches") or [] if m.get("loss_ones") is None][:TOP]
    result["matches"] = (result.get("matches") or [])[:TOP]
    if not result.get("capture_loss_ones") or not candidates:
        return result
    inside = relative_to(dataset, path)
    for m in candidates:
        back = await _pair(source, os.path.join(dataset, m["path"]), dataset, records, top=TOP, skip_folder=True)
        first = (back.get("matches") or [{}])[0]
        tied = [b for b in back.get("matches") or []
                if (b["score"], b["shared_tokens"]) == (first.get("score"), first.get("shared_tokens"))]
        this = next((b for b in tied if b["path"] == inside), None)
        if this is not None:  # the capture's own figures against the sample, as P on the capture gives them
            return {**result, "sample_capture": {**this, "path": m["path"], "loss_ones": None}}
    return {**result, "sample_capture": None}


async def _scan(source: Source, dataset: str, use_cache: bool,
                progress: Callable[[ScanProgressData], None] | None) -> tuple[list[DatasetRecord], int, int]:
    """The dataset's records (cached ones stand for unchanged files), the files read and their bytes."""
    cache = None
    if use_cache:
        try:
            cache = ScanCache()
        except Exception:  # noqa: BLE001 - a broken cache costs time, never the answer
            cache = None
    records: list[DatasetRecord] = []
    read = bytes_read = 0
    try:
        async for item in scan_dataset(source, dataset, ScanOptions(pair=True), cache=cache):
            if "progress" in item:
                if progress is not None:
                    progress(item["progress"])
                continue
            records.append(item)
            if not item.get("cached"):
                read += 1
                bytes_read += item.get("bytes_read") or 0
    finally:
        if cache is not None:
            cache.close()
    return records, read, bytes_read


async def _pair(source: Source, capture: str, dataset: str, records: list[DatasetRecord], *, top: int,
                exclude: frozenset[str] = frozenset(), skip_folder: bool, read: int = 0,
                bytes_read: int = 0) -> PairResult:
    """Print the capture next to the records (Source.pair_print) and rank them."""
    printed = await source.pair_print(capture, widths_of(records))
    out: PairResult = {"capture": capture, "dataset": dataset}
    if "error" in printed:
        return {**out, "matches": [], "error": printed["error"]}
    inside = relative_to(dataset, capture)
    skip = set(exclude) | ({inside} if inside else set())
    if skip_folder and inside is not None:
        folder = os.path.dirname(inside)
        skip |= {r["path"] for r in records if os.path.dirname(r["path"]) == folder}
    ranked = await asyncio.to_thread(rank, printed, records, top=len(records), exclude=frozenset(skip))
    loss = {r["path"]: r.get("loss_ones") for r in records}
    matches = ranked[:top]
    for m in matches:
        m["loss_ones"] = loss.get(m["path"])
    if inside is not None:
        out["capture_loss_ones"] = loss.get(inside)
    if matches:  # a tie for first (a one-token capture: every sample that starts alike) is said
        tie = sum((m["score"], m["shared_tokens"]) == (matches[0]["score"], matches[0]["shared_tokens"]) for m in ranked)
        if tie > 1:
            out["tie"] = tie
    by = matches[0]["how"] if matches else ("ids" if printed.get("ids") else "states")
    refused = [r["error"] for r in records if torch_gate.refused(r.get("error"))]
    if refused:
        out["refused"], out["refusal"] = len(refused), refused[0]
    return {**out, "computed": printed.get("computed"), "capture_ids": printed.get("ids") is not None, "capture_tokens": printed["n"],
            "paired_by": by, **({"capture_ids_blank": printed["ids_blank"]} if printed.get("ids_blank") else {}),
            "matches": matches, "files": len(records), "files_read": read, "bytes_read": bytes_read}

