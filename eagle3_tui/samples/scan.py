"""Scan a dataset folder tree: one small JSON record per file, computed next to the data.

Headless and shipped to the remote box by the agent: torch and the standard library only.

    for record in scan_tree(root, full=False, rows=64, workers=None, cancel=event, progress=cb):
        ...

Two depths:
- quick (default): header, ids, loss mask and `rows` evenly spaced valid rows (plus a couple of
  padding rows) per slot, read through torch's mmap, so a big sample costs a few MiB of reads.
  NaN/Inf are then only looked for in those rows. `.ckpt.gz` cannot be mapped: it costs a full read.
- full: every row (NaN/Inf anywhere, exact norms).

Records (JSON-ready, floats finite or None):
    {"path": rel, "index": N|None, "shard": rel folder, "size", "mtime", "mode", "schema",
     "tokens", "valid_tokens", "padding", "padding_nonzero", "masked_zero_tail", "loss_ones",
     "k", "hidden", "dtype", "final_norm", "slots": [slot...], "final": slot|None,
     "signature": {"rel_final": [k], "cos_next": [k-1], "cos_final": x}, "fingerprint",
     "rows_read", "bytes_read"}
    slot = {"norm_mean", "norm_max", "nan", "inf", "first_nonfinite_row"}
or {"path", "index", "shard", "size", "mtime", "error": msg} (+ "not_sample": True).
`known` files (same size and mtime as a cached record) come back as stubs
{"path", "size", "mtime", "cached": True} without being opened.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat as stat_mod
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from eagle3_tui.samples import vocab
from eagle3_tui.samples.sample import NotASample, SampleError

DEFAULT_ROWS = 64
#: padding rows looked at in quick mode to tell whether they carry non-zero states
PAD_PROBE = 2
#: elements per chunk in full mode (bounds the float32 buffer)
CHUNK_ELEMENTS = 1 << 21
#: files handed to a worker at a time: amortises inter-process overhead, keeps records flowing
CHUNK_FILES = 16
#: file name patterns a producer uses for samples: data_12.ckpt, hs_3.safetensors
_INDEX = re.compile(r"^[A-Za-z]+_(\d+)\.")
_SAMPLE_EXT = (".pt", ".pth", ".ckpt", ".gz", ".safetensors", ".bin")
_MAGIC = (b"PK\x03\x04", b"\x1f\x8b", b"\x80")


class Cancelled(Exception):
    """The caller set the cancel event."""


# ------------------------------------------------------------------------------- walking


def file_index(name: str) -> int | None:
    m = _INDEX.match(name)
    return int(m.group(1)) if m else None


def _natural(name: str) -> tuple:
    parts: list = re.split(r"(\d+)", name.casefold())
    parts[1::2] = map(int, parts[1::2])
    return (*parts, -1, name)


def walk(root: str, cancel: threading.Event | None = None) -> Iterator[tuple[str, int | None, float | None]]:
    """(relative path, size, mtime) of every file under root, folders in natural order.

    Symbolic links to files are followed (size None for a dead link); links to folders are not,
    so a loop cannot make the walk endless. Hidden names (".*") are skipped.
    """
    stack = [""]
    while stack:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                entries = sorted(it, key=lambda d: _natural(d.name))
        except OSError:
            if not rel:
                raise
            yield rel + "/", None, None  # an unreadable folder is reported like a file error
            continue
        subdirs = []
        for d in entries:
            if d.name.startswith("."):
                continue
            path = f"{rel}/{d.name}" if rel else d.name
            try:
                if d.is_dir(follow_symlinks=False):
                    subdirs.append(path)
                    continue
                st = d.stat(follow_symlinks=True)
            except OSError:
                yield path, None, None
                continue
            if stat_mod.S_ISREG(st.st_mode):
                yield path, st.st_size, st.st_mtime
        stack.extend(reversed(subdirs))


# ------------------------------------------------------------------------------- one file


def scan_file(root: str, rel: str, size: int | None, mtime: float | None, *, full: bool = False,
              rows: int = DEFAULT_ROWS, vocab_mapping: str | None = None) -> dict[str, Any]:
    """The record of one file; every problem becomes an error record, never an exception."""
    name = rel.rsplit("/", 1)[-1]
    base = {
        "path": rel,
        "index": file_index(name),
        "shard": rel.rsplit("/", 1)[0] if "/" in rel else "",
        "size": size,
        "mtime": mtime,
    }
    path = os.path.join(root, rel)
    if size is None:
        return {**base, "error": "dead symbolic link" if os.path.islink(path) else "cannot be read (folder or file)"}
    looks_like_sample = base["index"] is not None or name.endswith(_SAMPLE_EXT)
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as err:
        return {**base, "error": "permission denied" if isinstance(err, PermissionError) else f"cannot read file: {err.strerror}"}
    if not looks_like_sample and not _known_magic(head, size):
        return {**base, "error": "not a sample file", "not_sample": True}
    try:
        return {**base, **_measure(path, size, full=full, rows=rows, vocab_mapping=vocab_mapping)}
    except NotASample as err:
        return {**base, "error": str(err), "not_sample": True}
    except SampleError as err:
        return {**base, "error": str(err)}
    except MemoryError:
        return {**base, "error": "out of memory while reading the file"}
    except Exception as err:  # one odd file must never stop a 100,000-file scan
        return {**base, "error": f"{type(err).__name__}: {str(err)[:200]}"}


def _known_magic(head: bytes, size: int) -> bool:
    from eagle3_tui.samples.safetensors_file import looks_like_safetensors

    return head.startswith(_MAGIC) or looks_like_safetensors(head, size)


def _measure(path: str, size: int, *, full: bool, rows: int, vocab_mapping: str | None = None) -> dict[str, Any]:
    import torch

    from eagle3_tui.samples.load import load_sample

    sample = load_sample(path)
    t, valid = sample.tokens, sample.valid_len
    parts = [s.tensor for s in sample.slots] + ([sample.final.tensor] if sample.final is not None else [])
    mapped = not _is_gzip(path)
    pick = _pick_rows(t, valid, rows)  # None: every row

    if mapped and not full and pick is not None:
        for x in parts:
            _no_readahead(x)
    stats = []
    sampled = []  # float32 [len(pick) or valid, H] per part, for signatures
    for x in parts:
        if full or pick is None:
            s, sub = _full_slot(x, valid, pick)
        else:
            s, sub = _quick_slot(x, valid, pick)
        stats.append(s)
        sampled.append(sub)

    n_slots = len(sample.slots)
    final = stats[n_slots] if sample.final is not None else None
    mask = sample.loss_mask
    ids = sample.ids
    pad = t - valid
    masked_zero_tail = 0
    if ids is not None and mask is not None and not pad:
        nz = torch.nonzero(ids).flatten()
        tail_start = int(nz[-1]) + 1 if nz.numel() else 0
        if t - tail_start >= 2:
            masked_zero_tail = int(mask[tail_start:].ne(0).sum())

    row_bytes = sum(x.shape[1] * x.element_size() for x in parts)
    if full or not mapped or pick is None:
        bytes_read = size
        rows_read = t
    else:
        rows_read = len(pick)
        vec = sum(v.numel() * v.element_size() for v in (ids, mask) if v is not None)
        bytes_read = min(size, rows_read * row_bytes + vec + 4096)

    pad_flags = [s.pop("_pad_nonzero") for s in stats]
    return {
        "mode": "full" if full else "quick",
        "schema": sample.schema,
        "tokens": t,
        "valid_tokens": valid,
        "padding": pad,
        "padding_nonzero": any(pad_flags),
        "masked_zero_tail": masked_zero_tail,
        "loss_ones": int(mask[:valid].ne(0).sum()) if mask is not None else None,
        "k": n_slots,
        "hidden": sample.hidden,
        "dtype": sample.dtype,
        "final_norm": sample.final_norm,
        "slots": stats[:n_slots],
        "final": final,
        "signature": _signature(sampled, n_slots, sample.final is not None),
        "fingerprint": _fingerprint(ids, sampled),
        "rows_read": rows_read,
        "bytes_read": bytes_read,
        "mapped": mapped,
        # loss tokens in/out of the draft vocabulary (samples/vocab.py), when a mapping is in use
        **vocab.scan_counts(vocab_mapping, ids, mask, valid),
    }


def _no_readahead(x) -> None:
    """madvise(MADV_RANDOM) on the mapped storage behind x: without it, each of the few rows a
    quick scan touches pulls in megabytes of kernel readahead (most of a 224 MiB file)."""
    import ctypes
    import mmap as mmap_mod

    advice = getattr(mmap_mod, "MADV_RANDOM", None)
    if advice is None:
        return
    try:
        storage = x.untyped_storage()
        start, size = storage.data_ptr(), storage.nbytes()
        page = mmap_mod.PAGESIZE
        begin = start - start % page
        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise(ctypes.c_void_p(begin), ctypes.c_size_t(start + size - begin), ctypes.c_int(advice))
    except (OSError, AttributeError, RuntimeError):
        pass  # only a speed hint


def _is_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def _pick_rows(t: int, valid: int, rows: int):
    """Sorted row indices for quick mode: `rows` evenly spaced valid rows (the first included)
    and up to PAD_PROBE padding rows; None when that would be (nearly) every row anyway."""
    import torch

    if rows <= 0 or t <= rows + PAD_PROBE:
        return None
    n = min(rows, valid)
    picked = torch.linspace(0, max(valid - 1, 0), n).round().long().unique() if valid else torch.empty(0, dtype=torch.long)
    if t > valid:
        pad = torch.tensor(sorted({valid, t - 1})[:PAD_PROBE], dtype=torch.long)
        picked = torch.cat([picked, pad])
    return picked


def _slot_stats(norms, valid_norms, nan: int, inf: int, first_bad: int | None, pad_norms) -> dict[str, Any]:
    import torch

    finite = valid_norms[torch.isfinite(valid_norms)]
    return {
        "norm_mean": _finite(float(finite.mean())) if finite.numel() else None,
        "norm_max": _finite(float(finite.max())) if finite.numel() else None,
        "nan": nan,
        "inf": inf,
        "first_nonfinite_row": first_bad,
        "_pad_nonzero": bool((pad_norms != 0).any()) if pad_norms is not None and pad_norms.numel() else False,
    }


def _quick_slot(x, valid: int, pick):
    import torch

    sub = x.index_select(0, pick).float()  # reads only the picked rows of the mapped file
    norms = torch.linalg.vector_norm(sub, dim=-1)
    in_valid = pick < valid
    nan = inf = 0
    first_bad = None
    if not bool(torch.isfinite(norms).all()):
        nan, inf = int(torch.isnan(sub).sum()), int(torch.isinf(sub).sum())
        bad = ~torch.isfinite(norms)
        first_bad = int(pick[bad.nonzero()[0, 0]])
    stats = _slot_stats(norms, norms[in_valid], nan, inf, first_bad, norms[~in_valid])
    # Row 0 is its own stratum: real models (and the demo one) put a massive activation on the
    # first token, which would weigh 1/rows in the sample instead of 1/valid in the file.
    vn = norms[in_valid]
    if vn.numel() > 1 and int(pick[0]) == 0 and bool(torch.isfinite(vn).all()):
        stats["norm_mean"] = _finite((float(vn[0]) + (valid - 1) * float(vn[1:].mean())) / valid)
    return stats, sub[in_valid]


def _full_slot(x, valid: int, pick):
    import torch

    t, h = x.shape
    step = max(1, CHUNK_ELEMENTS // max(h, 1))
    norms = torch.empty(t, dtype=torch.float32)
    buf = torch.empty((min(step, t), h), dtype=torch.float32)
    nan = inf = 0
    first_bad = None
    for r0 in range(0, t, step):
        r1 = min(t, r0 + step)
        chunk = buf[: r1 - r0]
        chunk.copy_(x[r0:r1])
        n = torch.linalg.vector_norm(chunk, dim=-1)
        norms[r0:r1] = n
        if not bool(torch.isfinite(n).all()):
            nan += int(torch.isnan(chunk).sum())
            inf += int(torch.isinf(chunk).sum())
            if first_bad is None:
                first_bad = r0 + int((~torch.isfinite(n)).nonzero()[0, 0])
    stats = _slot_stats(norms, norms[:valid], nan, inf, first_bad, norms[valid:])
    if pick is None:
        sub = x[:valid].float()
    else:
        sub = x.index_select(0, pick[pick < valid]).float()
    return stats, sub


def _signature(sampled: list, n_slots: int, has_final: bool) -> dict[str, Any]:
    """Cheap numbers that tell capture layers apart across files: each slot's norm relative to
    the final state's, and the mean cosine between neighbouring slots (over the sampled rows)."""
    import torch

    def mean_norm(x):
        n = torch.linalg.vector_norm(x, dim=-1)
        n = n[torch.isfinite(n)]
        return float(n.mean()) if n.numel() else math.nan

    def mean_cos(a, b):
        c = torch.nn.functional.cosine_similarity(a, b, dim=-1, eps=1e-12)
        c = c[torch.isfinite(c)]
        return _finite(float(c.mean())) if c.numel() else None

    if not sampled or sampled[0].shape[0] == 0:
        return {"rel_final": [], "cos_next": [], "cos_final": None}
    slots = sampled[:n_slots]
    ref = mean_norm(sampled[n_slots]) if has_final else (mean_norm(slots[0]) if slots else math.nan)
    rel = [_finite(mean_norm(s) / ref) if ref and math.isfinite(ref) else None for s in slots]
    same_width = all(s.shape == slots[0].shape for s in slots)
    cos_next = [mean_cos(a, b) for a, b in zip(slots, slots[1:])] if same_width else []
    cos_final = mean_cos(slots[-1], sampled[n_slots]) if has_final and slots and slots[-1].shape == sampled[n_slots].shape else None
    return {"rel_final": rel, "cos_next": cos_next, "cos_final": cos_final}


def _fingerprint(ids, sampled: list) -> str:
    """Equal for files with the same ids and the same (sampled) states: finds duplicates."""
    h = hashlib.blake2b(digest_size=12)
    if ids is not None:
        h.update(ids.contiguous().numpy().tobytes())
    for x in sampled:
        h.update(str(tuple(x.shape)).encode())
        h.update(x.contiguous().numpy().tobytes())
    return h.hexdigest()


def _finite(v: float | None) -> float | None:
    if v is None or not math.isfinite(v):
        return None
    return v


# ------------------------------------------------------------------------------- many files


class ScanProgress:
    """What a progress line or bar shows; updated by scan_tree as records arrive."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.files_total = 0
        self.bytes_total = 0
        self.listing_done = False
        self.files_done = 0
        self.bytes_done = 0  # sizes of files finished (scanned or cached)
        self.bytes_read = 0  # what reading them cost

    @property
    def elapsed(self) -> float:
        return max(time.monotonic() - self.started, 1e-9)

    def eta(self) -> float | None:
        if not self.listing_done or not self.bytes_done:
            return None
        left = self.bytes_total - self.bytes_done
        return left * self.elapsed / self.bytes_done

    def to_json(self) -> dict[str, Any]:
        return {
            "files_done": self.files_done, "files_total": self.files_total,
            "bytes_done": self.bytes_done, "bytes_total": self.bytes_total,
            "bytes_read": self.bytes_read, "seconds": round(self.elapsed, 3),
            "listing_done": self.listing_done,
        }


def _init_worker() -> None:
    import signal

    import torch

    # ctrl+c is the parent's to handle (it terminates the pool); a worker dying on it would
    # lose its chunk and leave the parent waiting
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)


def _scan_chunk(args) -> list[dict[str, Any]]:
    root, chunk, full, rows, vocab_mapping = args
    return [scan_file(root, rel, size, mtime, full=full, rows=rows, vocab_mapping=vocab_mapping)
            for rel, size, mtime in chunk]


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def scan_tree(
    root: str,
    *,
    full: bool = False,
    rows: int = DEFAULT_ROWS,
    workers: int | None = None,
    cancel: threading.Event | None = None,
    known: dict[str, tuple[int, float]] | None = None,
    progress: Callable[[ScanProgress], None] | None = None,
    vocab_mapping: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Records of every file under root, each as soon as it is ready (not in path order).

    Raises OSError when root itself cannot be listed. When `cancel` is set, stops within about
    one chunk of files per worker and returns (records already yielded stand).
    `vocab_mapping` (else a vocab_mapping.pt found in the tree) adds draft-vocabulary counts.
    """
    if not os.path.isdir(root):
        os.scandir(root).close()  # raises the real error (missing, not a folder, permission)
    cancel = cancel or threading.Event()
    state = ScanProgress()
    todo: list[tuple[str, int | None, float | None]] = []
    try:
        for rel, size, mtime in walk(root, cancel):
            state.files_total += 1
            state.bytes_total += size or 0
            if known is not None and size is not None and known.get(rel) == (size, mtime):
                state.files_done += 1
                state.bytes_done += size
                yield {"path": rel, "size": size, "mtime": mtime, "cached": True}
            else:
                todo.append((rel, size, mtime))
    except Cancelled:
        return
    state.listing_done = True
    if progress is not None:
        progress(state)
    vocab_mapping = vocab.mapping_for_scan(root, vocab_mapping, [rel for rel, _, _ in todo])
    for record in _run(root, todo, full, rows, workers or default_workers(), cancel, vocab_mapping):
        state.files_done += 1
        state.bytes_done += record.get("size") or 0
        state.bytes_read += record.get("bytes_read") or 0
        yield record
        if progress is not None:
            progress(state)


def _run(root, todo, full, rows, workers, cancel, vocab_mapping=None) -> Iterable[dict[str, Any]]:
    chunks = [todo[i : i + CHUNK_FILES] for i in range(0, len(todo), CHUNK_FILES)]
    if workers <= 1 or len(chunks) <= 1:
        for rel, size, mtime in todo:
            if cancel.is_set():
                return
            yield scan_file(root, rel, size, mtime, full=full, rows=rows, vocab_mapping=vocab_mapping)
        return
    import multiprocessing

    # fork: a worker starts in milliseconds (spawn would import torch again, ~1.5 s each)
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    pool = ctx.Pool(min(workers, len(chunks)), initializer=_init_worker)
    try:
        for batch in pool.imap_unordered(_scan_chunk, [(root, c, full, rows, vocab_mapping) for c in chunks]):
            for record in batch:
                yield record
            if cancel.is_set():
                return
    finally:
        pool.terminate()
        pool.join()
