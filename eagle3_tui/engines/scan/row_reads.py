"""The rows a quick scan reads of a sample, and how it reads them cheaply (engines/scan/measure.py
reads them, rows_pass.py goes over them): `rows` evenly spaced valid rows and a couple of padding
rows (pick_rows), read with pread at their offsets inside torch's zip, readahead off (pread_rows),
or else through the mapping, readahead off too (no_readahead).

torch and the standard library only (shipped to the remote box by the agent).
"""

from __future__ import annotations

import ctypes
import mmap as mmap_mod
import os
import struct
import zipfile

#: padding rows looked at in quick mode to tell whether they carry non-zero states
PAD_PROBE = 2
#: a sample whose rows hold at most this many elements in all is read whole even in quick mode:
#: picking rows costs more than the arithmetic on every row (about 100 rows of 3 slots of 64)
SMALL_ROWS_ELEMENTS = 1 << 16


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
