"""A quick scan within a byte budget per sample, every byte it reads counted as it reads it.

A real sample is large (T 2,048, H 4,096 in bf16: 64 MiB; T 4,096, H 7,168: 224 MiB) and a
dataset holds 100,000 of them: bytes, not cores, decide how long a quick scan takes. So a quick
scan reads at most `budget` bytes of a sample (ScanOptions.budget, `scan --budget`):

- the file's structure without its data: torch's zip through engines/read/torch_zip.py (the
  central directory, the pickle and a local header per record: ~6 KiB), or a safetensors header;
  the tensors come back as shapes with their offsets in the file (`_checkpoint_offset`). A zip
  that reader does not take is loaded whole (torch.load, weights_only) and read as a full scan
  reads it;
- the ids and the loss mask whole (16 KiB each at T 2,048);
- as many evenly spaced valid rows (plus PAD_PROBE padding rows) of every part as fit the rest
  (fit_rows): fewer for wide samples, every row of a sample the budget holds whole.

Everything goes through pread on one descriptor with readahead off (POSIX_FADV_RANDOM), and each
page of the file a read touches is counted once, as the kernel reads it: Reader.bytes is what was
read, counted, not estimated (a mapping would pull in a page-fault window per touched row that
nobody counts). The first page (the format sniffed by file_record.scan_file) is counted too.

torch and the standard library only (shipped to the remote box by the agent).
"""

from __future__ import annotations

import builtins
import io
import json
import os
import struct
import sys
import threading
from typing import Any

from eagle3_tui.engines.read import torch_gate, torch_zip
from eagle3_tui.engines.read.load import ZIP_MAGIC
from eagle3_tui.engines.read.safetensors_file import _DTYPES, MAX_HEADER, looks_like_safetensors

PAGE = 4096
#: what reading a sample's structure costs at most (zip directory, pickle, local headers), kept
#: out of the rows' share of the budget; a header that takes more only leaves fewer rows
STRUCTURE_BYTES = 16 << 10
#: padding rows a quick scan reads to tell whether they carry states (row_reads.PAD_PROBE)
PAD_ROWS = 2
#: torch's zip structure read by engines/read/torch_zip.py (no unpickler); False: every torch zip
#: loaded whole by torch.load (what the tests compare it with)
STATIC_ZIP = True


def fit_rows(rows: int, budget: int, size: int, parts: list, vectors: int, padded: bool = True) -> int | None:
    """Valid rows per part a scan with this budget picks (its padding probes aside); None for
    every row (a sample no larger than the budget). The same for both depths, from the shapes
    only: the full scan takes its layer signature from the rows the quick one reads.
    vectors: bytes of the ids and the loss mask (read whole); padded: the sample ends in
    padding (PAD_ROWS of it are read too)."""
    if size <= budget:
        return None
    cost = sum(_page_span(sum(x.shape[1] for x, _ in g) * g[0][0].element_size()) for g in _side_by_side(parts)) or 1
    left = budget - STRUCTURE_BYTES - _page_span(vectors)
    # two at least: the first and the last valid row (the fingerprint's) are always read
    return max(2, min(rows, left // cost - (PAD_ROWS if padded else 0)))


def _page_span(n: int) -> int:
    """The most pages n bytes at any offset touch, in bytes."""
    return (-(-n // PAGE) + 1) * PAGE if n else 0


class Reader(io.RawIOBase):
    """A sample file read with pread, readahead off; `bytes` counts every byte read, page-widened.
    fd: the file open already with readahead off (file_record._head read its first bytes with it),
    used and left open; else the reader opens the path and closes it. first: the file's first
    bytes, read already with fd (a pread within them is served from them: page 0 is counted)."""

    def __init__(self, path: str, fd: int | None = None, first: builtins.bytes = b""):
        super().__init__()
        self.owned = fd is None
        self.first = first if fd is not None else b""
        self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)) if fd is None else fd
        self.size = os.fstat(self.fd).st_size
        self.pages = {0}  # the pages of the file read (page 0: the head file_record.scan_file read)
        if self.owned and hasattr(os, "posix_fadvise"):
            os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_RANDOM)

    def close(self) -> None:
        if not self.closed and self.owned:
            os.close(self.fd)
        super().close()

    # ------------------------------------------------------------ counted reads

    @property
    def bytes(self) -> int:
        """Bytes read: every page touched, once (the last page of the file may be partial)."""
        last = (self.size - 1) // PAGE
        return len(self.pages) * PAGE - (PAGE - (self.size - last * PAGE) if last in self.pages else 0)

    def pread(self, n: int, offset: int) -> builtins.bytes:  # (`bytes` is the count, in this class)
        """n bytes at offset; the pages they lie in are counted (what the kernel reads)."""
        if offset == 0 and n <= len(self.first):
            return self.first[:n]  # read by file_record._head with this descriptor, page 0 counted
        data = os.pread(self.fd, n, offset)
        if data:
            self.pages.update(range(offset // PAGE, (offset + len(data) - 1) // PAGE + 1))
        return data

    def whole(self, x):
        """The real tensor behind a structure-only (meta) tensor x, read at its offset."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        start, nbytes = _offset(x), _extent(x)
        data = self.pread(nbytes, start)
        if len(data) != nbytes:
            raise ValueError("the file ends inside a tensor")
        flat = torch.frombuffer(bytearray(data), dtype=x.dtype)
        return flat.as_strided(tuple(x.shape), tuple(x.stride()))

    def wholes(self, xs: list) -> list:
        """whole() of each x, in one read when the span from the first to the last touches no page
        the tensors themselves do not (the ids and the loss mask, next to each other in the file)."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        held, plan = _LAST_WHOLES
        if len(held) != len(xs) or any(a is not b for a, b in zip(held, xs)):
            plan = _wholes_plan(xs)
            _LAST_WHOLES[:] = [tuple(xs), plan]
        if plan is None:
            return [self.whole(x) for x in xs]
        lo, hi, pages, views = plan
        buf = bytearray(hi - lo)
        if os.preadv(self.fd, [buf], lo) != hi - lo:
            raise ValueError("the file ends inside a tensor")
        self.pages.update(pages)
        out = [torch.frombuffer(buf, dtype=dtype, offset=at, count=count) for dtype, at, count, _ in views]
        # a 1-D contiguous tensor (the usual ids and mask) is what frombuffer gave: no as_strided
        return [x if how is None else x.as_strided(*how) for x, (*_, how) in zip(out, views)]

    def block(self, parts: list, rows: list[int]):
        """The picked rows of every part as one [P, R, w] tensor, each row read straight into its
        place (the parts side by side in a row of the file in one single-buffer preadv per row:
        no copies, no stack; in memory [R, P, w], seen as [P, R, w]); None when the parts differ
        in width or dtype (rows() then)."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        x0 = parts[0]
        width, dtype = x0.shape[1], x0.dtype
        if any(x.shape[1] != width or x.dtype != dtype for x in parts) or not hasattr(os, "preadv"):
            return None
        n, row_bytes = len(rows), width * x0.element_size()
        line = len(parts) * row_bytes
        buf = _block_buffer(n * line)  # every byte of it read below
        view = memoryview(buf)
        fd, preadv = self.fd, os.preadv
        p = 0
        for group in _side_by_side(parts):
            base, step = group[0][1], group[0][0].stride(0) * x0.element_size()
            span = len(group) * row_bytes
            at = p * row_bytes
            for r in rows:
                if preadv(fd, [view[at : at + span]], base + r * step) != span:
                    raise ValueError("the file ends inside a row")
                at += line
            self.pages.update(_row_pages(base, step, span, rows))
            p += len(group)
        return torch.frombuffer(buf, dtype=dtype).view(n, len(parts), width).permute(1, 0, 2)

    def rows(self, parts: list, rows: list[int]) -> list:
        """The picked rows of each part (structure-only [T, w] tensors) as real [R, w] tensors.
        The parts side by side in a row of the file (the slots of aux_hidden_state) come in one
        read per row."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        out = []
        for group in _side_by_side(parts):
            x0, es = group[0][0], group[0][0].element_size()
            base, step = group[0][1], x0.stride(0) * es
            width = sum(x.shape[1] for x, _ in group) * es
            buf = bytearray(len(rows) * width)
            view = memoryview(buf)
            for i, r in enumerate(rows):
                chunk = self.pread(width, base + r * step)
                if len(chunk) != width:
                    raise ValueError("the file ends inside a row")
                view[i * width : (i + 1) * width] = chunk
            block = torch.frombuffer(buf, dtype=x0.dtype).view(len(rows), width // es)
            col = 0
            for x, _ in group:
                out.append(block[:, col : col + x.shape[1]])
                col += x.shape[1]
        return out


#: per thread: the last block's buffer, reused when nothing holds it any more (a fresh half MiB a
#: file was zeroed and faulted in page by page: ~100 page faults, 1-2 us each on this VM)
_BLOCKS = threading.local()


def _block_buffer(n: int) -> bytearray:
    """A bytearray of n bytes (contents undefined): the last one made in this thread when it is
    that size and no tensor or view of the last block refers to it, else a new one."""
    held = getattr(_BLOCKS, "buf", None)
    # more references than when it was made here (_BLOCKS' own, `held`, getrefcount's argument):
    # a tensor or view of the last block is alive, and keeps its bytes
    if held is None or len(held) != n or sys.getrefcount(held) > _BLOCKS.refs:
        held = _BLOCKS.buf = bytearray(n)
        _BLOCKS.refs = sys.getrefcount(held)
    return held


#: wholes() of the same tensors as the file before (a shard laid out alike): its plan
_LAST_WHOLES: list = [(), None]


def _wholes_plan(xs: list) -> tuple | None:
    """(first byte, past the last, the pages between, how to see each x in the bytes read) for one
    read of xs, None when they are not next to each other (a read each)."""
    spans = [(_offset(x), _extent(x)) for x in xs]
    pages: set[int] = set()
    for start, n in spans:
        if n:
            pages.update(range(start // PAGE, (start + n - 1) // PAGE + 1))
    lo, hi = min(s for s, _ in spans), max(s + n for s, n in spans)
    if any(n == 0 for _, n in spans) or len(pages) != (hi - 1) // PAGE - lo // PAGE + 1:
        return None
    views = []
    for x, (start, n) in zip(xs, spans):
        count, shape, stride = n // x.element_size(), tuple(x.shape), tuple(x.stride())
        views.append((x.dtype, start - lo, count, None if (shape, stride) == ((count,), (1,)) else (shape, stride)))
    return lo, hi, tuple(pages), views


_ROW_PAGES: dict[tuple, tuple[int, ...]] = {}


def _row_pages(base: int, step: int, span: int, rows: list[int]) -> tuple[int, ...]:
    """The pages `span` bytes at base + r * step for each r touch (the same for every file of a
    shard laid out alike: kept)."""
    key = (base, step, span, *rows)
    pages = _ROW_PAGES.get(key)
    if pages is None:
        if len(_ROW_PAGES) >= 256:
            _ROW_PAGES.clear()
        pages = _ROW_PAGES[key] = tuple({p for r in rows for p in range((base + r * step) // PAGE,
                                                                      (base + r * step + span - 1) // PAGE + 1)})
    return pages


def _offset(x) -> int:
    """Where x's first element is: its offset in the file (a structure-only tensor), else its
    address in memory (a mapped one): what tells parts side by side in a row apart."""
    st = x.untyped_storage()
    base = st._checkpoint_offset if x.device.type == "meta" else st.data_ptr()
    return int(base) + x.storage_offset() * x.element_size()


def _extent(x) -> int:
    """Bytes from x's first element to past its last one."""
    if not x.numel():
        return 0
    return (sum((n - 1) * s for n, s in zip(x.shape, x.stride())) + 1) * x.element_size()


_LAST_GROUPS: list = [(), []]


def _side_by_side(parts: list) -> list[list]:
    """Runs of consecutive parts next to each other in every row of the file: [(part, offset)].
    (fit_rows and Reader.block ask it of the same parts: the last answer is kept.)"""
    held, groups = _LAST_GROUPS
    if len(held) == len(parts) and all(a is b for a, b in zip(held, parts)):
        return groups
    groups = _groups(parts)
    _LAST_GROUPS[:] = [tuple(parts), groups]
    return groups


def _groups(parts: list) -> list[list]:
    groups: list[list] = []
    for x in parts:
        es, base = x.element_size(), _offset(x)
        if groups:
            y, y_base = groups[-1][-1]
            if (y.stride(0) == x.stride(0) and y.dtype == x.dtype and y_base + y.shape[1] * es == base
                    and y.device == x.device and _storage(y) == _storage(x)):
                groups[-1].append((x, base))
                continue
        groups.append([(x, base)])
    return groups


def _storage(x):
    st = x.untyped_storage()
    return st._checkpoint_offset if x.device.type == "meta" else st.data_ptr()


def structure(reader: Reader, head: bytes) -> tuple[Any, dict[str, str]] | None:
    """The object stored in the file with structure-only tensors (shapes, dtypes, offsets),
    and safetensors metadata; None when this reader does not take the file: not a torch zip nor
    safetensors, or a torch zip the quick reader cannot prove it reads as torch does
    (engines/read/torch_zip.py). The caller then loads it whole, with torch.load(weights_only=True):
    never with torch's "meta" load, which computes offsets nobody checks (and crashes on some files)."""
    if head.startswith(ZIP_MAGIC):
        torch_gate.check()  # what the full load would refuse, refused here the same
        if not STATIC_ZIP:
            return None
        try:
            # opcodes walked, nothing executed: what torch.load gives, at a tenth of its CPU
            return torch_zip.read_structure(reader.pread, reader.size), {}
        except torch_zip.NotStatic:
            return None
    if looks_like_safetensors(head, reader.size):
        return _safetensors_structure(reader)
    return None


def _safetensors_structure(reader: Reader) -> tuple[dict, dict[str, str]] | None:
    # lazy: torch: loaded when used, never at start-up
    import torch

    (n,) = struct.unpack("<Q", reader.pread(8, 0))
    if n > min(MAX_HEADER, reader.size - 8):
        return None
    header = json.loads(reader.pread(n, 8))
    meta = header.pop("__metadata__", None) or {}
    out = {}
    for name, info in header.items():
        dtype = getattr(torch, _DTYPES[info["dtype"]])
        begin, end = info["data_offsets"]
        t = torch.empty(info["shape"], dtype=dtype, device="meta")
        if t.numel() * t.element_size() != end - begin or 8 + n + end > reader.size:
            return None  # the reader of record says what is wrong with it
        t.untyped_storage()._checkpoint_offset = 8 + n + begin
        out[name] = t
    return out, {str(k): str(v) for k, v in meta.items()}
