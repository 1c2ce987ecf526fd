"""The record of one file of a scan (engines/scan/records.py runs it for every file of the tree):
the file's place in the tree (path, sample index, shard, size, mtime) and its measured numbers
(measure.py), or an error record saying why it cannot be used; never an exception. A FIFO, socket
or device is never opened; a file that is no sample by name is opened only for its first page.

Shipped to the remote box with the scan: torch and the standard library only.
"""

from __future__ import annotations

import os
import re
from typing import Any, cast

from eagle3_tui.engines.read.file_names import SAMPLE_EXT
from eagle3_tui.engines.read.load import SMALL_FILE_BYTES, regular_file_size
from eagle3_tui.engines.read.safetensors_file import looks_like_safetensors
from eagle3_tui.engines.read.sample import NotASample, SampleError
from eagle3_tui.engines.results.errors import error_result
from eagle3_tui.engines.results.scan import ScanRecord
from eagle3_tui.engines.scan.measure import measure
from eagle3_tui.engines.scan.options import DEFAULT_BUDGET, DEFAULT_ROWS
from eagle3_tui.engines.scan.walk import file_index

_MAGIC = (b"PK\x03\x04", b"\x1f\x8b", b"\x80")
#: what _head reads of a file: its first page
_HEAD_BYTES = 4096


def scan_file(root: str, rel: str, size: int | None, mtime: float | None, *, full: bool = False,
              rows: int = DEFAULT_ROWS, budget: int = DEFAULT_BUDGET, drafter: tuple[str, str | None] | None = None,
              vocab_mapping: str | None = None, pair: bool = False) -> ScanRecord:
    """The record of one file; every problem becomes an error record, never an exception.
    pair: a sample's record carries the pairing print (engines/scan/pairprint.py)."""
    name = rel.rsplit("/", 1)[-1]
    base = place(rel, size, mtime)
    path = os.path.join(root, rel)
    if size is None:
        why = _why_unread(path)
        odd = why.startswith(("a FIFO", "a socket", "a character", "a block")) and base["index"] is None
        return error_record(base, why, **({"not_sample": True} if odd else {}))
    looks_like_sample = base["index"] is not None or name.endswith(SAMPLE_EXT)
    head = b""  # a small sample is read whole, gzip or not: loading it says what it is
    fd = None  # the descriptor the head was read with: the counting reader reads the rest with it
    if not looks_like_sample or size > min(SMALL_FILE_BYTES, budget):  # budget: read by the counting reader
        try:
            fd, head = _head(path)
        except OSError as err:
            return error_record(base, "permission denied" if isinstance(err, PermissionError) else f"cannot read file: {err.strerror}")
    try:
        if not looks_like_sample and not _known_magic(head, size):
            return error_record(base, "not a sample file", not_sample=True)
        measured = cast(dict, measure(path, size, head, full=full, rows=rows, budget=budget, drafter=drafter,
                                      vocab_mapping=vocab_mapping, pair=pair, fd=fd))
        return cast(ScanRecord, {**base, **measured})
    except NotASample as err:
        return error_record(base, str(err), not_sample=True)
    except SampleError as err:
        return error_record(base, _out_of_memory(str(err)) or str(err))
    except MemoryError:
        return error_record(base, _OUT_OF_MEMORY)
    except Exception as err:  # one odd file must never stop a 100,000-file scan
        return error_record(base, _out_of_memory(str(err)) or f"{type(err).__name__}: {str(err)[:200]}")
    finally:
        if fd is not None:
            os.close(fd)


_OUT_OF_MEMORY = "out of memory while reading the file"
#: torch's allocator ("can't allocate memory: you tried to allocate 17179869176 bytes") and its
#: mapping of a file ("unable to mmap N bytes ...: Cannot allocate memory (12)") when an allocation
#: fails: past a scan worker's limit (options.FILE_MEMORY) or the machine's
_NO_MEMORY = re.compile(r"can't allocate memory|cannot allocate memory", re.IGNORECASE)
_ASKED = re.compile(r"tried to allocate (\d+) bytes|unable to mmap (\d+) bytes")


def _out_of_memory(text: str) -> str | None:
    """The error of a file whose read ran out of memory, told from torch's message (None: not
    that), with what it asked for at once when the message says."""
    if not _NO_MEMORY.search(text):
        return None
    asked = _ASKED.search(text)
    n = int(asked.group(1) or asked.group(2)) if asked else 0
    if n < 1 << 20:
        return _OUT_OF_MEMORY
    return f"{_OUT_OF_MEMORY} (it asked for {f'{n / 2**30:.1f} GiB' if n >= 1 << 30 else f'{n >> 20} MiB'} at once)"


def _head(path: str) -> tuple[int, bytes]:
    """(an open descriptor, the first page), readahead off: a buffered read of the first bytes
    marked pages for readahead that a later read of the sample then pulled in (half a MiB of a
    64 MiB sample nobody asked for). The caller closes the descriptor; the counting reader
    (engines/scan/budget.py) reads the sample with it (one open a file, not two) and takes the
    page as read (torch's zip is read from its first page: the kernel reads a page whatever part
    of it is asked, so asking for all of it costs no byte more than the 16 the format needs).
    O_NONBLOCK: should the file have been swapped for a FIFO since the listing, opening returns
    (and the read fails) instead of waiting for a writer."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        return fd, os.pread(fd, _HEAD_BYTES, 0)
    except BaseException:
        os.close(fd)
        raise


def error_record(base: dict[str, Any], message: str, **extra: Any) -> ScanRecord:
    """The record of a file that cannot be used: its place, "error" (+ "not_sample")."""
    return error_result(base["path"], message, **{k: v for k, v in base.items() if k != "path"}, **extra)  # type: ignore[return-value]


def place(rel: str, size: int | None, mtime: float | None) -> dict[str, Any]:
    """A file's place in the tree, the fields every record of it starts with."""
    return {"path": rel, "index": file_index(rel.rsplit("/", 1)[-1]),
            "shard": rel.rsplit("/", 1)[0] if "/" in rel else "", "size": size, "mtime": mtime}


def _why_unread(path: str) -> str:
    """Why a file the walk could not size is not read (it is never opened here)."""
    if path.endswith("/"):
        return "cannot be read (folder or file)"
    try:
        regular_file_size(path)
    except SampleError as err:
        return str(err)
    return "cannot be read (folder or file)"


def _known_magic(head: bytes, size: int) -> bool:
    return head.startswith(_MAGIC) or looks_like_safetensors(head, size)
