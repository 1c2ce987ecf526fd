"""How a scan reads a sample's rows cheaply and what it keeps of them (engines/scan/records.py walks the
tree and runs the pool): the rows a quick scan picks, read with pread at their offsets inside
torch's zip (readahead off) or through the mapping; every part's norms, NaN/Inf and cosines in one
batched pass; the per-part statistics, the layer signature and the fingerprint of a record.

torch and the standard library only (shipped to the remote box by the agent).
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import mmap as mmap_mod
import os
import struct
import sys
import threading
import zipfile
from typing import Any

#: padding rows looked at in quick mode to tell whether they carry non-zero states
PAD_PROBE = 2
#: elements per chunk in full mode (bounds the float32 buffer)
CHUNK_ELEMENTS = 1 << 21
#: a sample whose rows hold at most this many elements in all is read whole even in quick mode:
#: picking rows costs more than the arithmetic on every row (about 100 rows of 3 slots of 64)
SMALL_ROWS_ELEMENTS = 1 << 16
#: a valid row whose norm in some part is this many times that part's median row norm is a
#: massive activation (massive_rows): SmolLM2-135M's row 0 is 155x the median at b15, 10x at b30,
#: while its other rows stay within 4.5x of the median at every boundary. Lower than the views'
#: mark (engines/read/massive.MASSIVE_FACTOR, 20x): the scan only sets rows aside for its means,
#: where an ordinary row left out costs nothing, while a view names each marked row to the user
MASSIVE = 10.0


def pread_rows(path: str, parts: list, pick) -> list | None:
    """The picked rows of each part read with pread at their offsets in the file, readahead off
    (POSIX_FADV_RANDOM): the page cache then holds little more than those rows. Through the
    mapping, each touched row brought in ~75 KiB (the kernel's fault granularity), 9% of a
    224 MiB sample for 64 rows. None (the caller reads through the mapping) when the file is not
    torch's uncompressed zip or the offsets cannot be proven.

    torch.load(mmap=True) maps the whole file once, so every storage's address minus its offset
    in the file is one constant: found by pairing with the zip's record offsets, and checked
    against all of them."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    try:
        with open(path, "rb") as fh:
            offsets = set()
            archive = zipfile.ZipFile(fh)
            for info in archive.infolist():
                if info.filename.lower().endswith("/byteorder") and archive.read(info) != b"little":
                    return None  # torch swapped the mapped bytes: the file's are not the tensors'
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
            for group in _side_by_side(parts, shifts[0]):
                # the slots of one aux row lie side by side in the file: one read for all of them
                (x0, base, step), es = group[0], group[0][0].element_size()
                width = sum(x.shape[1] for x, _, _ in group) * es
                buf = bytearray(len(rows) * width)
                view = memoryview(buf)
                for i, r in enumerate(rows):
                    chunk = os.pread(fd, width, base + r * step)
                    if len(chunk) != width:
                        return None
                    view[i * width : (i + 1) * width] = chunk
                block = torch.frombuffer(buf, dtype=x0.dtype).view(len(rows), width // es)
                col = 0
                for x, _, _ in group:
                    out.append(block[:, col : col + x.shape[1]])
                    col += x.shape[1]
            return out
    except (OSError, ValueError, zipfile.BadZipFile, RuntimeError, struct.error):
        return None


def _side_by_side(parts: list, shift: int) -> list[list]:
    """Runs of consecutive parts that sit next to each other in every row of the file (the slots
    of aux_hidden_state): [(part, file offset of its row 0, bytes from row to row), ...] each."""
    groups: list[list] = []
    for x in parts:
        es = x.element_size()
        base = x.untyped_storage().data_ptr() - shift + x.storage_offset() * es
        step = x.stride(0) * es
        if groups:
            y, y_base, y_step = groups[-1][-1]
            if (y_step == step and y.dtype == x.dtype and y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
                    and y_base + y.shape[1] * es == base):
                groups[-1].append((x, base, step))
                continue
        groups.append([(x, base, step)])
    return groups


_LIBC: list = []


def no_readahead(x) -> None:
    """madvise(MADV_RANDOM) on the mapped storage behind x: without it, each of the few rows a
    quick scan touches pulls in megabytes of kernel readahead (most of a 224 MiB file)."""
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


def pick_rows(t: int, valid: int, rows: int, row_elements: int | None = None):
    """Sorted row indices for quick mode: `rows` evenly spaced valid rows (the first included)
    and up to PAD_PROBE padding rows; None when that would be (nearly) every row anyway, or when
    every row (row_elements each, all parts; None: not asked) is cheaper to read than a pick.
    A list: a quick scan's reader reads rows by their numbers (an index tensor, where one is needed,
    is made of it)."""
    small = row_elements is not None and t * row_elements <= SMALL_ROWS_ELEMENTS
    if rows <= 0 or t <= rows + PAD_PROBE or small:
        return None
    n = min(rows, valid)
    # in plain Python: the torch ops (linspace, round, unique, cat) cost more than the arithmetic
    step = (valid - 1) / (n - 1) if n > 1 else 0.0
    picked = sorted({round(i * step) for i in range(n)})
    if t > valid:
        picked += sorted({valid, t - 1})[:PAD_PROBE]
    return picked


def rows_pass(parts: Any, pick, t: int):
    """One pass over the rows (all of them, or `pick`) of P parts of equal width.

    Returns norms [P, R] (float32), the cosine between neighbouring parts per row [P-1, R]
    (None for one part), per part the NaN and Inf counts and the first row holding one, and
    the rows read as float32 [P, R, H] when they fit one chunk (else None). The norms and
    cosines are tensors, numpy arrays for a stacked [P, R, H] block (what prefix_summary reads).
    Full mode goes in chunks of rows so a 224 MiB sample never becomes a float32 copy at once.
    """
    # lazy: torch: loaded when used, never at start-up
    import torch

    stacked = isinstance(parts, torch.Tensor)  # [P, R, H] already (budget.Reader.block)
    n_parts, h = (parts.shape[0], parts.shape[2]) if stacked else (len(parts), parts[0].shape[1])
    n_rows = t if pick is None else pick.shape[0]
    step = max(1, CHUNK_ELEMENTS // max(h * n_parts, 1))
    if stacked:  # a quick scan's rows (budget.Reader.block): into the thread's scratch tensors
        chunk = _scratch_float(parts) if parts.dtype != torch.float32 else parts
        values = chunk.numpy()  # the norms and cosines as numpy arrays: prefix_summary's lists come from them
        n, dots = _norms_dots(values)
        norm_rows = n.tolist()
        flat = [v for row in norm_rows for v in row]
        finite = math.isfinite(sum(flat))  # (float32 norms: their sum in a double cannot overflow)
        nan, inf = [0] * n_parts, [0] * n_parts
        first: list[int | None] = [None] * n_parts
        if not finite:  # count them (_nonfinite's counts, on a numpy view: no torch kernel met for the first time)
            for i, row in enumerate(norm_rows):
                bad = [r for r, v in enumerate(row) if not math.isfinite(v)]
                if bad:
                    part = values[i]
                    nan[i] = int((part != part).sum())  # NaN alone is not itself
                    inf[i] = int((abs(part) == math.inf).sum())
                    first[i] = bad[0] if pick is None else int(pick[bad[0]])
        # the cosines' last three float32 operations in numpy, which rounds each as torch does
        cos = None if dots is None else _cosines(dots, n, finite and max(flat) < _PLAIN_NORM)
        return n, cos, nan, inf, first, None
    if n_rows <= step and len({x.dtype for x in parts}) == 1:
        # one chunk (every small file): no buffer, no copies into it, no slices to fill
        chunk = torch.stack(parts if pick is None else [x.index_select(0, pick) for x in parts]).float()
        n, dots = _tensors(_norms_dots(_numpy(chunk)))
        cos = None if dots is None else dots / (n[:-1] * n[1:]).clamp_min(1e-12)
        nan, inf, first = _nonfinite(chunk, n, 0, pick, [0] * n_parts, [0] * n_parts, [None] * n_parts)
        return n, cos, nan, inf, first, chunk
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
        n, dots = _tensors(_norms_dots(_numpy(chunk)))
        norms[:, r0:r1] = n
        if cos is not None and dots is not None:
            cos[:, r0:r1] = dots / (n[:-1] * n[1:]).clamp_min(1e-12)
        _nonfinite(chunk, n, r0, pick, nan, inf, first)
    return norms, cos, nan, inf, first, None


def _norms_dots(rows):
    """(norms [P, R], dots of each part's rows with the next part's [P-1, R] or None) of float32
    rows [P, R, H] (numpy arrays, of torch's making: numpy is never imported here). Each value is
    one BLAS dot product (numpy's matmul of a row with a row), which depends on that row's values
    alone: the same bits for a row whichever rows are read with it, so a quick and a full scan
    agree on the rows both read. It is also closer to the exact value than torch's vector_norm
    (1e-7 against 7e-7 relative, on random rows against float64) and, for a quick scan's rows,
    half the time of vector_norm, the products and their sum: one pass over the float32 rows
    instead of four (~110 against ~220 us for a 64 MiB sample, caches cold).

    Under numpy's errstate for these products alone: a row of signalling NaNs (or Inf against
    -Inf, Inf against 0) raises the invalid flag, and numpy's "RuntimeWarning: invalid value
    encountered in matmul" reached the user's terminal; the values are the same, the caller counts
    them as NaN/Inf. numpy is the arrays' own module (sys.modules: torch's .numpy() loaded it)."""
    with sys.modules[type(rows).__module__].errstate(invalid="ignore", over="ignore"):
        n = (rows[..., None, :] @ rows[..., :, None])[..., 0, 0] ** 0.5  # (numpy's ** 0.5 is its sqrt)
        if rows.shape[0] < 2:
            return n, None
        a, b = rows[:-1], rows[1:]
        return n, (a[..., None, :] @ b[..., :, None])[..., 0, 0]


def _numpy(chunk):
    """A float32 tensor as a numpy array (a file's tensors may keep requires_grad)."""
    return (chunk.detach() if chunk.requires_grad else chunk).numpy()


def _tensors(arrays: tuple) -> tuple:
    # lazy: torch: loaded when used, never at start-up
    import torch

    return tuple(None if a is None else torch.from_numpy(a) for a in arrays)


#: per thread: the float32 rows of the last stacked pass, reused by the next one of the same
#: shape (a quick scan's files of one shard): no fresh megabyte to fault in and evict the caches
#: with, per file
_SCRATCH = threading.local()


def _scratch_float(parts):
    """parts.float() into the float32 tensor the last call of this shape and layout made (what
    .float() makes: the same strides, the same conversion, the same bits)."""
    held = getattr(_SCRATCH, "rows", None)
    if held is None or held.shape != parts.shape or held.stride() != parts.stride():
        held = _SCRATCH.rows = parts.float()
        if held.stride() != parts.stride():  # not the layout asked: never reused
            _SCRATCH.rows = None
        return held
    return held.copy_(parts)


#: norms below this: the product of two is a finite float32 (rows_pass's numpy path)
_PLAIN_NORM = 1e18


def _cosines(dots, n, plain: bool = True):
    """dots / (n[:-1] * n[1:]).clamp_min(1e-12) as torch computes it in float32, of numpy arrays.
    plain: the norms are finite and below _PLAIN_NORM (nothing overflows, no NaN): the product,
    the clamp and the quotient in numpy, each one correctly rounded IEEE float32 operation as in
    torch. Else in torch, where NaN, Inf and overflow need no warnings silenced."""
    if not plain:
        n, dots = _tensors((n, dots))
        m = n.shape[0] - 1
        return (dots / (n.narrow(0, 0, m) * n.narrow(0, 1, m)).clamp_min(1e-12)).numpy()
    den = n[:-1] * n[1:]
    return dots / den.clip(min=den.dtype.type(1e-12))


def _nonfinite(chunk, n, r0: int, pick, nan: list, inf: list, first: list):
    """Add the NaN/Inf counts (and first rows) of a chunk of rows starting at row r0."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    # norms are >= 0: their sum is finite exactly when they all are (or it overflowed: exact check)
    # (math.isfinite of the item: torch.isfinite on a single value costs ~20 us, several kernels)
    if not math.isfinite(n.sum().item()) and not bool(torch.isfinite(n).all()):
        for i in (~torch.isfinite(n)).any(dim=1).nonzero().flatten().tolist():
            nan[i] += int(torch.isnan(chunk[i]).sum())
            inf[i] += int(torch.isinf(chunk[i]).sum())
            if first[i] is None:
                at = r0 + int((~torch.isfinite(n[i])).nonzero()[0, 0])
                first[i] = at if pick is None else int(pick[at])
    return nan, inf, first


def parts_apart(parts: list, pick, t: int, n_slots: int, has_final: bool):
    """rows_pass for parts of different widths: one part at a time, and the cosine only
    between neighbours that share a width (NaN where they do not)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    n_rows = t if pick is None else len(pick)
    norms = torch.empty(len(parts), n_rows, dtype=torch.float32)
    cos = torch.full((max(len(parts) - 1, 0), n_rows), math.nan) if len(parts) > 1 else None
    nan, inf, first = [], [], []
    for i, x in enumerate(parts):
        n, _, a, b, c, _ = rows_pass([x], pick, t)
        norms[i] = n[0]
        nan.append(a[0])
        inf.append(b[0])
        first.append(c[0])
    for i in range(len(parts) - 1):
        if parts[i].shape[1] == parts[i + 1].shape[1]:
            _, c, *_ = rows_pass([parts[i], parts[i + 1]], pick, t)
            if cos is not None:
                cos[i] = c[0]
    return norms, cos, nan, inf, first, None


def all_finite(norms, cos) -> bool:
    """Every norm and cosine is finite (one reduction: a NaN or Inf anywhere makes the sum one;
    a sum that overflows only sends the caller down the exact, slower path)."""
    total = norms.sum().item() if cos is None else norms.sum().item() + cos.sum().item()
    return math.isfinite(total)


def massive_rows(vn):
    """bool [R]: the rows of vn [P, R] (norms of the valid rows read, NaN where not finite) whose
    norm in some part is MASSIVE times that part's median row norm. Real models put a residual
    norm of ~25,000 on a few tokens (the first token, <|im_start|>) against ~150-600 elsewhere at
    the middle layers (SmolLM2-135M: b15 row 0 25,139 vs median 163): one such row weighs more than
    the other 63 of a quick scan's rows together, so a mean over them follows how many such rows a
    prompt has, not the capture. The signature and norm_bulk set them aside."""
    med = vn.nanmedian(1, keepdim=True).values
    return (vn > MASSIVE * med).any(0) & (med > 0).all()  # a part with a median of 0: no yardstick


def prefix_summary(norms, cos, n_valid: int, valid: int, row0_stratum: bool, nan: list, inf: list,
                   first: list, n_slots: int, has_final: bool, slots_same_width: bool):
    """part_stats and signature at once when the valid rows read are the first n_valid of norms:
    the norms and cosines moved to Python at once and summed there (on a small file the per-op
    cost of torch, not the arithmetic, is what its statistics cost: a dozen small ops were twice
    these). The massive-activation rows (massive_rows, the same rows and medians) are taken off
    the sums for norm_bulk and the signature. A norm or cosine that is not finite (a NaN in a
    row) is left out as part_stats and signature leave it out (_nonfinite_summary)."""
    p = norms.shape[0]
    rows = norms.tolist()
    cos_rows = [c[:n_valid] for c in cos.tolist()] if cos is not None else []
    sums = [sum(r[:n_valid]) for r in rows]
    pads = [sum(r[n_valid:]) for r in rows]
    cos_sums = [sum(c) for c in cos_rows]
    if not all(map(math.isfinite, sums + pads + cos_sums)):
        return _nonfinite_summary(rows, cos_rows, n_valid, valid, row0_stratum, nan, inf, first, n_slots, has_final,
                                  slots_same_width)
    # torch's lower median (massive_rows' nanmedian of finite norms), of the float32 values as such
    meds = [sorted(r[:n_valid])[(n_valid - 1) // 2] for r in rows]
    tops = [max(r[:n_valid]) for r in rows]
    big: set[int] = set()
    if min(meds) > 0:  # a part with a median of 0: no yardstick
        for r, m, top in zip(rows, meds, tops):
            if top > MASSIVE * m:
                big.update(j for j, v in enumerate(r[:n_valid]) if v > MASSIVE * m)
    bulk = [s - sum(r[j] for j in big) for s, r in zip(sums, rows)] if big else sums
    bulk_cos = [s - sum(c[j] for j in big) for s, c in zip(cos_sums, cos_rows)] if big else cos_sums
    kept = n_valid - len(big)
    stats = []
    for i in range(p):
        mean = sums[i] / n_valid
        if row0_stratum and n_valid > 1:  # row 0 is its own stratum (part_stats says why)
            mean = (rows[i][0] + (valid - 1) * (sums[i] - rows[i][0]) / (n_valid - 1)) / valid
        stats.append({"norm_mean": _finite(mean), "norm_bulk": _finite(bulk[i] / kept), "norm_max": _finite(tops[i]),
                      "nan": nan[i], "inf": inf[i], "first_nonfinite_row": first[i], "_pad_nonzero": pads[i] > 0})
    sig = _signature_of([b / kept for b in bulk], [_finite(c / kept) for c in bulk_cos], n_slots, has_final,
                        slots_same_width, len(big))
    return stats, sig


def _nonfinite_summary(rows: list, cos_rows: list, n_valid: int, valid: int, row0_stratum: bool, nan: list,
                       inf: list, first: list, n_slots: int, has_final: bool, slots_same_width: bool):
    """prefix_summary of norms (rows: per part, as a list) or cosines some of which are not
    finite: each sum, count, median and maximum over a part's finite values alone, the massive
    rows found among them, as part_stats and signature do in torch (which cost a NaN file ~0.8 ms
    more than any other). The arithmetic of the finite case where a part has no bad value."""
    ok = math.isfinite
    fins = [[v for v in r[:n_valid] if ok(v)] for r in rows]
    meds = [sorted(f)[(len(f) - 1) // 2] if f else math.nan for f in fins]
    big: set[int] = set()
    if all(m > 0 for m in meds):  # a part with a median of 0, or none: no yardstick
        for r, m in zip(rows, meds):
            big.update(j for j, v in enumerate(r[:n_valid]) if ok(v) and v > MASSIVE * m)
    stats, plain = [], []
    for i, (r, f) in enumerate(zip(rows, fins)):
        s = sum(f)
        gone = [r[j] for j in big if ok(r[j])]
        kept = len(f) - len(gone)
        bulk = (s - sum(gone)) / kept if kept else math.nan
        mean = s / len(f) if f else math.nan
        if row0_stratum and n_valid > 1 and len(f) == n_valid:  # row 0 is its own stratum (part_stats says why)
            mean = (r[0] + (valid - 1) * (s - r[0]) / (n_valid - 1)) / valid
        stats.append({"norm_mean": _finite(mean), "norm_bulk": _finite(bulk), "norm_max": _finite(max(f)) if f else None,
                      "nan": nan[i], "inf": inf[i], "first_nonfinite_row": first[i],
                      "_pad_nonzero": any(v != 0 for v in r[n_valid:])})  # (NaN is not 0)
        plain.append(bulk)
    means = []
    for c in cos_rows:
        fin = [v for v in c if ok(v)]
        gone = [c[j] for j in big if ok(c[j])]
        kept = len(fin) - len(gone)
        means.append(_finite((sum(fin) - sum(gone)) / kept) if kept else None)
    return stats, _signature_of(plain, means, n_slots, has_final, slots_same_width, len(big))


def part_stats(norms, positions, valid: int, nan: list, inf: list, first: list, quick: bool,
                finite_prefix: int | None = None):
    """Per part: the slot record (norm mean and max over the valid rows read, and norm_bulk: the
    mean without the massive-activation rows, see massive_rows).
    finite_prefix: every norm is finite and the valid rows read are the first finite_prefix."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if finite_prefix:
        vn = norms[:, :finite_prefix]
        mean = vn.sum(1) / finite_prefix
        if quick and finite_prefix > 1 and int(positions[0]) == 0:
            mean = (vn[:, 0] + (valid - 1) * vn[:, 1:].mean(1)) / valid  # row 0 stratum (below)
        bulk = vn[:, ~massive_rows(vn)].mean(1)
        pn = norms[:, finite_prefix:]
        pad_nonzero = pn.ne(0).any(1).tolist() if pn.shape[1] else [False] * len(norms)
        return [
            {"norm_mean": _finite(m), "norm_bulk": _finite(b), "norm_max": _finite(x), "nan": nan[i], "inf": inf[i],
             "first_nonfinite_row": first[i], "_pad_nonzero": bool(pad_nonzero[i])}
            for i, (m, b, x) in enumerate(zip(mean.tolist(), bulk.tolist(), vn.amax(1).tolist()))
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
    bulk_ok = ok & ~massive_rows(torch.where(ok, vn, math.nan)) if vn.shape[1] else ok
    bulk = torch.where(bulk_ok, vn, 0.0).sum(1) / bulk_ok.sum(1).clamp_min(1)
    top = torch.where(ok, vn, -math.inf).amax(1) if vn.shape[1] else torch.full((len(norms),), math.nan)
    pn = norms[:, ~in_valid]
    pad_nonzero = (pn != 0).any(1).tolist() if pn.shape[1] else [False] * len(norms)
    has, has_bulk = (count > 0).tolist(), (bulk_ok.sum(1) > 0).tolist()
    mean_l, bulk_l, top_l = mean.tolist(), bulk.tolist(), top.tolist()
    stats = [
        {
            "norm_mean": _finite(mean_l[i]) if has[i] else None,
            "norm_bulk": _finite(bulk_l[i]) if has_bulk[i] else None,
            "norm_max": _finite(top_l[i]) if has[i] else None,
            "nan": nan[i],
            "inf": inf[i],
            "first_nonfinite_row": first[i],
            "_pad_nonzero": bool(pad_nonzero[i]),
        }
        for i in range(len(norms))
    ]
    return stats


def signature(norms, cos, rows, n_slots: int, has_final: bool, slots_same_width: bool,
               finite: bool = False) -> dict[str, Any]:
    """Cheap numbers that tell capture layers apart across files: each slot's norm relative to
    the final state's, and the mean cosine between neighbouring slots, over `rows` (a slice or
    row indices) less the massive-activation rows (massive_rows; "massive": how many were set
    aside). finite: every norm and cosine is."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    count = (rows.stop - rows.start) if isinstance(rows, slice) else len(rows)
    if not len(norms) or not count:
        return {"rel_final": [], "cos_next": [], "cos_final": None, "massive": 0}
    pick = (lambda x: x[:, rows]) if isinstance(rows, slice) else (lambda x: x.index_select(1, rows))
    vn = pick(norms)
    if finite:
        keep = ~massive_rows(vn)
        kept = int(keep.sum())
        plain = (vn[:, keep].sum(1) / kept).tolist()
        kept_means = (pick(cos)[:, keep].sum(1) / kept).tolist() if cos is not None else []
        return _signature_of(plain, [_finite(v) for v in kept_means], n_slots, has_final, slots_same_width, count - kept)
    big = massive_rows(torch.where(torch.isfinite(vn), vn, math.nan))
    fin = torch.isfinite(vn) & ~big
    plain = torch.where(fin.any(1), torch.where(fin, vn, 0.0).sum(1) / fin.sum(1).clamp_min(1), math.nan).tolist()
    means: list = []
    if cos is not None:
        c = pick(cos)
        ok = torch.isfinite(c) & ~big
        m = torch.where(ok, c, 0.0).sum(1) / ok.sum(1).clamp_min(1)
        means = [_finite(v) if n else None for v, n in zip(m.tolist(), ok.sum(1).tolist())]
    return _signature_of(plain, means, n_slots, has_final, slots_same_width, int(big.sum()))


def _signature_of(plain: list, means: list, n_slots: int, has_final: bool, slots_same_width: bool,
                  massive: int = 0) -> dict[str, Any]:
    ref = plain[n_slots] if has_final else (plain[0] if n_slots else math.nan)
    rel = [_finite(m / ref) if ref and math.isfinite(ref) else None for m in plain[:n_slots]]
    cos_next = means[: max(n_slots - 1, 0)] if slots_same_width else []
    cos_final = means[n_slots - 1] if has_final and n_slots and len(means) >= n_slots else None
    return {"rel_final": rel, "cos_next": cos_next, "cos_final": cos_final, "massive": massive}


def fingerprint(ids, parts: list, valid: int, read: tuple | None = None) -> str:
    """Equal for files with the same ids and the same states (the first and last valid row of
    each part, which both depths read, as stored: bf16 bytes for a bf16 file): finds duplicates.
    The same in quick and full records, so a cached record of either depth can be matched with a
    new one. read: (the rows read: one [P, R, w] tensor or one [R, w] per part, their row
    indices), when the parts hold no data (engines/scan/budget.py): both rows are there.

    The stored bytes, not float32 ones: half the bytes to hash for a bf16 sample (the hash was a
    fifth of a quick scan's CPU on a 64 MiB one), and no conversion to make. SHA-256 cut to 96
    bits: the CPU's SHA instructions make it twice blake2b's speed here (54 vs 105 us for a
    64 MiB bf16 sample's 80 KiB); it finds copies, it defends against no one."""
    h = hashlib.sha256()
    if ids is not None:
        h.update(ids.contiguous().numpy())
    # lazy: torch: loaded when used, never at start-up
    import torch

    rows = sorted({0, valid - 1}) if valid else None
    if read is not None:
        got, picked = read
        picked = picked if isinstance(picked, list) else picked.tolist()
        at_read = [picked.index(r) for r in rows] if rows is not None else []
        block = got.view(torch.uint8).numpy() if isinstance(got, torch.Tensor) else None
        for i, part_head in enumerate(_part_heads(parts)):
            h.update(part_head)
            for j in at_read:
                h.update(block[i, j] if block is not None else got[i][j].view(torch.uint8).numpy())
        return h.hexdigest()[:24]
    for x, part_head in zip(parts, _part_heads(parts)):
        h.update(part_head)
        if rows is not None:
            stored = _stored(x)
            for r in rows:
                row = stored[r]
                h.update(row if row.flags.c_contiguous else row.copy())  # a transposed part
    return h.hexdigest()[:24]


#: the structure-only parts _part_heads was last asked about (the same tensors for every file of a
#: shard laid out alike: engines/read/torch_zip.py) and its answer
_LAST_HEADS: list = [((), [])]


def _part_heads(parts: list) -> list[bytes]:
    """What the fingerprint hashes before each part's rows: its shape and dtype."""
    held, heads = _LAST_HEADS[0]
    if len(held) != len(parts) or any(a is not b for a, b in zip(held, parts)):
        heads = [f"{tuple(x.shape)} {x.dtype}".encode() for x in parts]
        if all(x.device.type == "meta" for x in parts):  # never holds a mapped file's tensors
            _LAST_HEADS[0] = (tuple(parts), heads)
    return heads


_SAME_SIZE_INT = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


def _stored(x):
    """x's elements as a numpy view of their stored bytes, without a copy (bf16 and fp8, which
    numpy lacks, seen as integers of their size)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if not _NUMPY_DTYPES:
        _NUMPY_DTYPES.update((torch.float64, torch.float32, torch.float16, torch.int64, torch.int32, torch.int16,
                              torch.int8, torch.uint8, torch.bool))
    if x.requires_grad:
        x = x.detach()
    if x.dtype not in _NUMPY_DTYPES:
        x = x.view(getattr(torch, _SAME_SIZE_INT[x.element_size()]))
    return x.numpy()


_NUMPY_DTYPES: set = set()


def _finite(v: float | None) -> float | None:
    if v is None or not math.isfinite(v):
        return None
    return v
