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

import contextlib
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
#: from this size on a quick scan reads its rows with pread (see _pread_rows); below it, parsing
#: the zip costs more than the few pages a small file has
PREAD_MIN_BYTES = 16 << 20
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
              rows: int = DEFAULT_ROWS, drafter: tuple[str, str | None] | None = None,
              vocab_mapping: str | None = None) -> dict[str, Any]:
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
        return {**base, **_measure(path, size, head, full=full, rows=rows, drafter=drafter,
                                   vocab_mapping=vocab_mapping)}
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


def _measure(path: str, size: int, head: bytes, *, full: bool, rows: int,
             drafter: tuple[str, str | None] | None = None, vocab_mapping: str | None = None) -> dict[str, Any]:
    import torch

    from eagle3_tui.samples.load import load_sample

    sample = load_sample(path)
    n_slots = len(sample.slots)
    has_final = sample.final is not None
    parts = [s.tensor for s in sample.slots] + ([sample.final.tensor] if has_final else [])
    mapped = not head.startswith(b"\x1f\x8b")
    if mapped and not full:
        # ids and mask too, before valid_len reads them: through a plain mapping, reading those
        # 64 KiB pulled 16 MiB of readahead out of a 224 MiB sample
        for x in [*parts, *(v for v in (sample.ids, sample.loss_mask) if v is not None)]:
            _no_readahead(x)
    t, valid = sample.tokens, sample.valid_len
    pick = _pick_rows(t, valid, rows)  # None: every row
    quick = not full and pick is not None

    # every part in one batched pass when they share a width (the usual case: the per-op cost
    # of torch, not the arithmetic, is what a small file costs); else part by part
    rows_of = _pread_rows(path, parts, pick) if mapped and quick and parts and size >= PREAD_MIN_BYTES else None
    if rows_of is not None and all(x.shape[1] == parts[0].shape[1] for x in parts):
        norms, cos, nan, inf, first = _rows_pass(rows_of, None, len(pick))
        first = [None if f is None else int(pick[f]) for f in first]
    elif parts and all(x.shape[1] == parts[0].shape[1] for x in parts):
        norms, cos, nan, inf, first = _rows_pass(parts, pick if quick else None, t)
    else:
        norms, cos, nan, inf, first = _parts_apart(parts, pick if quick else None, t, n_slots, has_final)
    positions = pick if quick else torch.arange(t)
    # picked rows are sorted, valid ones first: the valid rows read are a prefix of norms
    picked_valid = int((pick < valid).sum()) if pick is not None else 0
    n_valid = picked_valid if quick else valid
    # the usual case (every norm and cosine finite) takes a path of a few torch ops: on a small
    # file the per-op cost of torch, not the arithmetic, is what the statistics cost
    finite = bool(torch.isfinite(norms).all()) and (cos is None or bool(torch.isfinite(cos).all()))
    stats = _part_stats(norms, positions, valid, nan, inf, first, quick, n_valid if finite else None)
    # signatures always come from the rows a quick scan reads, so quick and full records agree
    if quick or pick is None:
        sig_rows = slice(0, n_valid)
    else:
        sig_rows = pick[:picked_valid]

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
    if not quick or not mapped:
        bytes_read = size
        rows_read = t
    else:
        rows_read = len(pick)
        vec = sum(v.numel() * v.element_size() for v in (ids, mask) if v is not None)
        bytes_read = min(size, rows_read * row_bytes + vec + 4096)

    pad_flags = [s.pop("_pad_nonzero") for s in stats]
    # scan --drafter (samples/scan_accept.py): the drafter's top-1 on this file, next to the data
    accepted = {}
    if drafter is not None:
        from eagle3_tui.samples.scan_accept import record_acceptance

        accepted["accept"] = record_acceptance(sample, drafter[0], model=drafter[1], full=full, rows=rows)
    return {
        **accepted,
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
        "final": stats[n_slots] if has_final else None,
        "signature": _signature(norms, cos, sig_rows, n_slots, has_final,
                                len({x.shape[1] for x in parts[:n_slots]}) <= 1, finite),
        "fingerprint": _fingerprint(ids, parts, valid),
        "rows_read": rows_read,
        "bytes_read": bytes_read,
        "mapped": mapped,
        # loss tokens in/out of the draft vocabulary (samples/vocab.py), when a mapping is in use
        **vocab.scan_counts(vocab_mapping, ids, mask, valid),
    }


def _pread_rows(path: str, parts: list, pick) -> list | None:
    """The picked rows of each part read with pread at their offsets in the file, readahead off
    (POSIX_FADV_RANDOM): the page cache then holds little more than those rows. Through the
    mapping, each touched row brought in ~75 KiB (the kernel's fault granularity), 9% of a
    224 MiB sample for 64 rows. None (the caller reads through the mapping) when the file is not
    torch's uncompressed zip or the offsets cannot be proven.

    torch.load(mmap=True) maps the whole file once, so every storage's address minus its offset
    in the file is one constant: found by pairing with the zip's record offsets, and checked
    against all of them."""
    import struct
    import zipfile

    import torch

    try:
        with open(path, "rb") as fh:
            offsets = set()
            for info in zipfile.ZipFile(fh).infolist():
                if info.compress_type != zipfile.ZIP_STORED or "/data/" not in info.filename:
                    continue
                fh.seek(info.header_offset)
                head = fh.read(30)
                if head[:4] != b"PK\x03\x04":
                    return None
                name_len, extra_len = struct.unpack("<HH", head[26:30])
                offsets.add(info.header_offset + 30 + name_len + extra_len)
            ptrs = {x.untyped_storage().data_ptr() for x in parts}
            lowest = min(ptrs)
            shifts = [lowest - o for o in offsets if all(p - (lowest - o) in offsets for p in ptrs)]
            if len(shifts) != 1 or any(x.stride(-1) != 1 for x in parts):
                return None
            fd = fh.fileno()
            if hasattr(os, "posix_fadvise"):
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
            out = []
            rows = pick.tolist()
            for x in parts:
                es, h = x.element_size(), x.shape[1]
                base = x.untyped_storage().data_ptr() - shifts[0] + x.storage_offset() * es
                step = x.stride(0) * es
                buf = bytearray(len(rows) * h * es)
                view = memoryview(buf)
                for i, r in enumerate(rows):
                    chunk = os.pread(fd, h * es, base + r * step)
                    if len(chunk) != h * es:
                        return None
                    view[i * h * es : (i + 1) * h * es] = chunk
                out.append(torch.frombuffer(buf, dtype=x.dtype).view(len(rows), h))
            return out
    except (OSError, ValueError, zipfile.BadZipFile, RuntimeError, struct.error):
        return None


_LIBC: list = []


def _no_readahead(x) -> None:
    """madvise(MADV_RANDOM) on the mapped storage behind x: without it, each of the few rows a
    quick scan touches pulls in megabytes of kernel readahead (most of a 224 MiB file)."""
    import ctypes
    import mmap as mmap_mod

    advice = getattr(mmap_mod, "MADV_RANDOM", None)
    if advice is None:
        return
    try:
        if not _LIBC:
            _LIBC.append(ctypes.CDLL(None, use_errno=True))
        storage = x.untyped_storage()
        start, size = storage.data_ptr(), storage.nbytes()
        page = mmap_mod.PAGESIZE
        begin = start - start % page
        _LIBC[0].madvise(ctypes.c_void_p(begin), ctypes.c_size_t(start + size - begin), ctypes.c_int(advice))
    except (OSError, AttributeError, RuntimeError):
        pass  # only a speed hint


def _pick_rows(t: int, valid: int, rows: int):
    """Sorted row indices for quick mode: `rows` evenly spaced valid rows (the first included)
    and up to PAD_PROBE padding rows; None when that would be (nearly) every row anyway."""
    import torch

    if rows <= 0 or t <= rows + PAD_PROBE:
        return None
    n = min(rows, valid)
    # in plain Python: the torch ops (linspace, round, unique, cat) cost more than the arithmetic
    step = (valid - 1) / (n - 1) if n > 1 else 0.0
    picked = sorted({round(i * step) for i in range(n)})
    if t > valid:
        picked += sorted({valid, t - 1})[:PAD_PROBE]
    return torch.tensor(picked, dtype=torch.long)


def _rows_pass(parts: list, pick, t: int):
    """One pass over the rows (all of them, or `pick`) of P parts of equal width.

    Returns norms [P, R] (float32), the cosine between neighbouring parts per row [P-1, R]
    (None for one part), and per part the NaN and Inf counts and the first row holding one.
    Full mode goes in chunks of rows so a 224 MiB sample never becomes a float32 copy at once.
    """
    import torch

    n_parts, h = len(parts), parts[0].shape[1]
    n_rows = t if pick is None else len(pick)
    step = max(1, CHUNK_ELEMENTS // max(h * n_parts, 1))
    if n_rows <= step and len({x.dtype for x in parts}) == 1:
        # one chunk (every small file): no buffer, no copies into it, no slices to fill
        chunk = torch.stack(parts if pick is None else [x.index_select(0, pick) for x in parts]).float()
        n = torch.linalg.vector_norm(chunk, dim=-1)
        cos = None
        if n_parts > 1:
            cos = (chunk[:-1] * chunk[1:]).sum(-1) / (n[:-1] * n[1:]).clamp_min(1e-12)
        nan, inf, first = _nonfinite(chunk, n, 0, pick, [0] * n_parts, [0] * n_parts, [None] * n_parts)
        return n, cos, nan, inf, first
    norms = torch.empty(n_parts, n_rows, dtype=torch.float32)
    cos = torch.empty(n_parts - 1, n_rows, dtype=torch.float32) if n_parts > 1 else None
    nan, inf, first = [0] * n_parts, [0] * n_parts, [None] * n_parts
    buf = torch.empty(n_parts, min(step, n_rows), h, dtype=torch.float32)
    for r0 in range(0, n_rows, step):
        r1 = min(n_rows, r0 + step)
        chunk = buf[:, : r1 - r0]
        for i, x in enumerate(parts):
            # reads only these rows of the mapped file
            chunk[i].copy_(x[r0:r1] if pick is None else x.index_select(0, pick[r0:r1]))
        n = torch.linalg.vector_norm(chunk, dim=-1)
        norms[:, r0:r1] = n
        if cos is not None:
            dots = (chunk[:-1] * chunk[1:]).sum(-1)
            cos[:, r0:r1] = dots / (n[:-1] * n[1:]).clamp_min(1e-12)
        _nonfinite(chunk, n, r0, pick, nan, inf, first)
    return norms, cos, nan, inf, first


def _nonfinite(chunk, n, r0: int, pick, nan: list, inf: list, first: list):
    """Add the NaN/Inf counts (and first rows) of a chunk of rows starting at row r0."""
    import torch

    if not bool(torch.isfinite(n).all()):
        for i in (~torch.isfinite(n)).any(dim=1).nonzero().flatten().tolist():
            nan[i] += int(torch.isnan(chunk[i]).sum())
            inf[i] += int(torch.isinf(chunk[i]).sum())
            if first[i] is None:
                at = r0 + int((~torch.isfinite(n[i])).nonzero()[0, 0])
                first[i] = at if pick is None else int(pick[at])
    return nan, inf, first


def _parts_apart(parts: list, pick, t: int, n_slots: int, has_final: bool):
    """_rows_pass for parts of different widths: one part at a time, and the cosine only
    between neighbours that share a width (NaN where they do not)."""
    import torch

    n_rows = t if pick is None else len(pick)
    norms = torch.empty(len(parts), n_rows, dtype=torch.float32)
    cos = torch.full((max(len(parts) - 1, 0), n_rows), math.nan) if len(parts) > 1 else None
    nan, inf, first = [], [], []
    for i, x in enumerate(parts):
        n, _, a, b, c = _rows_pass([x], pick, t)
        norms[i] = n[0]
        nan.append(a[0])
        inf.append(b[0])
        first.append(c[0])
    for i in range(len(parts) - 1):
        if parts[i].shape[1] == parts[i + 1].shape[1]:
            _, c, *_ = _rows_pass([parts[i], parts[i + 1]], pick, t)
            cos[i] = c[0]
    return norms, cos, nan, inf, first


def _part_stats(norms, positions, valid: int, nan: list, inf: list, first: list, quick: bool,
                finite_prefix: int | None = None):
    """Per part: the slot record (norm mean and max over the valid rows read).
    finite_prefix: every norm is finite and the valid rows read are the first finite_prefix."""
    import torch

    if finite_prefix:
        vn = norms[:, :finite_prefix]
        mean = vn.sum(1) / finite_prefix
        if quick and finite_prefix > 1 and int(positions[0]) == 0:
            mean = (vn[:, 0] + (valid - 1) * vn[:, 1:].mean(1)) / valid  # row 0 stratum (below)
        pn = norms[:, finite_prefix:]
        pad_nonzero = pn.ne(0).any(1).tolist() if pn.shape[1] else [False] * len(norms)
        return [
            {"norm_mean": _finite(m), "norm_max": _finite(x), "nan": nan[i], "inf": inf[i],
             "first_nonfinite_row": first[i], "_pad_nonzero": bool(pad_nonzero[i])}
            for i, (m, x) in enumerate(zip(mean.tolist(), vn.amax(1).tolist()))
        ]
    in_valid = positions < valid
    vn = norms[:, in_valid]
    ok = torch.isfinite(vn)
    count = ok.sum(1)
    plain = torch.where(ok, vn, 0.0).sum(1) / count.clamp_min(1)
    mean = plain.clone()
    if quick and vn.shape[1] > 1 and int(positions[0]) == 0:
        # Row 0 is its own stratum: real models (and the demo one) put a massive activation on
        # the first token, which would weigh 1/rows in the sample instead of 1/valid in the file.
        strat = (vn[:, 0] + (valid - 1) * vn[:, 1:].mean(1)) / valid
        mean = torch.where(ok.all(1), strat, mean)
    top = torch.where(ok, vn, -math.inf).amax(1) if vn.shape[1] else torch.full((len(norms),), math.nan)
    pn = norms[:, ~in_valid]
    pad_nonzero = (pn != 0).any(1).tolist() if pn.shape[1] else [False] * len(norms)
    has = (count > 0).tolist()
    mean_l, top_l = mean.tolist(), top.tolist()
    stats = [
        {
            "norm_mean": _finite(mean_l[i]) if has[i] else None,
            "norm_max": _finite(top_l[i]) if has[i] else None,
            "nan": nan[i],
            "inf": inf[i],
            "first_nonfinite_row": first[i],
            "_pad_nonzero": bool(pad_nonzero[i]),
        }
        for i in range(len(norms))
    ]
    return stats


def _signature(norms, cos, rows, n_slots: int, has_final: bool, slots_same_width: bool,
               finite: bool = False) -> dict[str, Any]:
    """Cheap numbers that tell capture layers apart across files: each slot's norm relative to
    the final state's, and the mean cosine between neighbouring slots (over `rows`: a slice or
    row indices). finite: every norm and cosine is."""
    import torch

    count = (rows.stop - rows.start) if isinstance(rows, slice) else len(rows)
    if not len(norms) or not count:
        return {"rel_final": [], "cos_next": [], "cos_final": None}
    pick = (lambda x: x[:, rows]) if isinstance(rows, slice) else (lambda x: x.index_select(1, rows))
    vn = pick(norms)
    if finite:
        plain = (vn.sum(1) / count).tolist()
        means = (pick(cos).sum(1) / count).tolist() if cos is not None else []
        return _signature_of(plain, [_finite(v) for v in means], n_slots, has_final, slots_same_width)
    fin = torch.isfinite(vn)
    plain = torch.where(fin.any(1), torch.where(fin, vn, 0.0).sum(1) / fin.sum(1).clamp_min(1), math.nan).tolist()
    means: list = []
    if cos is not None:
        c = pick(cos)
        ok = torch.isfinite(c)
        m = torch.where(ok, c, 0.0).sum(1) / ok.sum(1).clamp_min(1)
        means = [_finite(v) if n else None for v, n in zip(m.tolist(), ok.sum(1).tolist())]
    return _signature_of(plain, means, n_slots, has_final, slots_same_width)


def _signature_of(plain: list, means: list, n_slots: int, has_final: bool, slots_same_width: bool) -> dict[str, Any]:
    ref = plain[n_slots] if has_final else (plain[0] if n_slots else math.nan)
    rel = [_finite(m / ref) if ref and math.isfinite(ref) else None for m in plain[:n_slots]]
    cos_next = means[: max(n_slots - 1, 0)] if slots_same_width else []
    cos_final = means[n_slots - 1] if has_final and n_slots and len(means) >= n_slots else None
    return {"rel_final": rel, "cos_next": cos_next, "cos_final": cos_final}


def _fingerprint(ids, parts: list, valid: int) -> str:
    """Equal for files with the same ids and the same states (the first and last valid row of
    each part, which both depths read): finds duplicates. The same in quick and full records,
    so a cached record of either depth can be matched with a new one."""
    h = hashlib.blake2b(digest_size=12)
    if ids is not None:
        h.update(ids.contiguous().numpy().tobytes())
    import torch

    at = torch.tensor(sorted({0, valid - 1})) if valid else None
    for x in parts:
        h.update(f"{tuple(x.shape)} {x.dtype}".encode())
        if at is not None:  # the rows' bytes back to back, as row by row (one gather instead of two)
            h.update(x.index_select(0, at).float().numpy().tobytes())
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
    root, chunk, full, rows, drafter, vocab_mapping = args
    return [scan_file(root, rel, size, mtime, full=full, rows=rows, drafter=drafter, vocab_mapping=vocab_mapping)
            for rel, size, mtime in chunk]


@contextlib.contextmanager
def one_torch_thread(needed: bool = True):
    """torch's intra-op threads on the tiny tensors of one sample cost more than they give, and
    on a shared machine they spin against other processes: 5-10x slower per file measured on
    2 busy cores. Process-wide while it lasts (torch has no per-thread setting)."""
    if not needed:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


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
    drafter: tuple[str, str | None] | None = None,
    vocab_mapping: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Records of every file under root, each as soon as it is ready (not in path order).

    drafter: (drafter folder, model folder or None): each record gets the drafter's top-1
    (samples/scan_accept.py); the caller checks the folder first (scan_accept.check_drafter),
    which also loads it here once, before the workers fork.

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
    for record in _run(root, todo, full, rows, workers or default_workers(), cancel, drafter, vocab_mapping):
        state.files_done += 1
        state.bytes_done += record.get("size") or 0
        state.bytes_read += record.get("bytes_read") or 0
        yield record
        if progress is not None:
            progress(state)


def _run(root, todo, full, rows, workers, cancel, drafter=None, vocab_mapping=None) -> Iterable[dict[str, Any]]:
    chunks = [todo[i : i + CHUNK_FILES] for i in range(0, len(todo), CHUNK_FILES)]
    if workers <= 1 or len(chunks) <= 1:
        with one_torch_thread(bool(todo)):
            for rel, size, mtime in todo:
                if cancel.is_set():
                    return
                yield scan_file(root, rel, size, mtime, full=full, rows=rows, drafter=drafter,
                                vocab_mapping=vocab_mapping)
        return
    import multiprocessing

    # fork after importing torch here: a worker then starts in milliseconds; one that imports
    # torch itself costs ~1.5 s of CPU each, taken from the cores the scan needs (spawn would too)
    import torch  # noqa: F401

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    import gc

    # frozen objects are left out of the children's collections, which would otherwise touch
    # (and so copy, page by page) the whole heap torch's import left in the parent
    gc.freeze()
    try:
        pool = ctx.Pool(min(workers, len(chunks)), initializer=_init_worker)
    finally:
        gc.unfreeze()
    try:
        for batch in pool.imap_unordered(_scan_chunk, [(root, c, full, rows, drafter, vocab_mapping)
                                                       for c in chunks]):
            for record in batch:
                yield record
            if cancel.is_set():
                return
    finally:
        pool.terminate()
        pool.join()
