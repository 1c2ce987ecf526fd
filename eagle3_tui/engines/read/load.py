"""Read a file safely and turn it into a Sample.

Safety: every pickle-based file goes through torch.load(..., weights_only=True), passed
explicitly, with no fallback to unsafe loading, and only after torch_gate.check() (a torch below
2.10 has known weights_only escapes: the file is then refused unread). The format is sniffed from the first bytes,
never from the extension. Each failure becomes a SampleError with a one-line message.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import pickle
import re
import stat
import tempfile
import warnings
import zipfile
import zlib
from typing import Any

from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.read.safetensors_file import (
    looks_like_safetensors,
    read_safetensors,
)
from eagle3_tui.engines.read.sample import Sample, SampleError
from eagle3_tui.engines.read.schema import normalize
from eagle3_tui.engines.read.zip_caps import check_expansion

ZIP_MAGIC = b"PK\x03\x04"
GZIP_MAGIC = b"\x1f\x8b"
PICKLE_PROTO = 0x80
#: a torch file up to this size is read in one go and loaded from memory: for the many small
#: samples of a dataset scan, one open and one read cost less than torch's mapping of the file
SMALL_FILE_BYTES = 256 << 10
#: the most a .ckpt.gz may expand to. One SpecForge sample (T 8k, H 8k, k 3, bf16) is ~0.5 GiB;
#: the cap keeps a gzip bomb (or a huge capture) under the 1.5 GiB a command may use in all.
MAX_GZIP_BYTES = 1024**3
#: a tensor whose elements would take this much more than the bytes it stores (stride 0,
#: overlapping strides) is refused instead of being expanded by the statistics
MAX_EXPANSION_BYTES = 64 * 1024**2
_GZIP_STEP = 1 << 20

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def load_sample(path: str, *, slots: int | None = None, hidden: int | None = None) -> Sample:
    obj, extra = read_object(path)
    check_tensors(obj)
    try:
        return normalize(obj, path=path, slots=slots, hidden=hidden, metadata=extra)
    except (SampleError, MemoryError):
        raise
    except Exception as err:  # noqa: BLE001 - a layout nobody foresaw: one line, with its type
        raise SampleError(f"cannot read this layout ({type(err).__name__}: {_first_line(err)})") from None


def maps_file(head: bytes, size: int) -> bool:
    """Whether read_object maps the file instead of reading it whole: a torch zip over
    SMALL_FILE_BYTES (torch.load(mmap=True)) or a safetensors file."""
    return (head.startswith(ZIP_MAGIC) and size > SMALL_FILE_BYTES) or looks_like_safetensors(head, size)


def read_object(path: str) -> tuple[Any, dict[str, str]]:
    """The Python object stored in `path` (tensors, dicts, lists), and safetensors metadata."""
    size = regular_file_size(path)
    try:
        # O_NONBLOCK: should the file be swapped for a FIFO after the stat, opening still returns
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise SampleError("not a regular file (it changed while being opened)")
            data = fh.read(size + 1 if size <= SMALL_FILE_BYTES else 16)
            # before torch inflates anything: what it would expand to, from the directory
            expansion = check_expansion(fh.fileno(), size) if data.startswith(ZIP_MAGIC) else None
    except OSError as err:
        raise SampleError(_os_message(path, err)) from None
    head = data[:16]

    if size == 0:
        raise SampleError("empty file (0 bytes)")
    if head.startswith(ZIP_MAGIC):
        if expansion is not None and expansion.deflated:
            # torch maps only stored records: a deflated one is read inflated, as torch.load reads it
            return _torch_load(path if len(data) > SMALL_FILE_BYTES or size > SMALL_FILE_BYTES else io.BytesIO(data),
                               mmap=False), {}
        if maps_file(head, size) or len(data) > SMALL_FILE_BYTES:
            return _torch_load(path, mmap=True), {}
        return _torch_load(io.BytesIO(data), mmap=False), {}
    if head.startswith(GZIP_MAGIC):
        return _load_gzip(path), {}
    if looks_like_safetensors(head, size):
        return read_safetensors(path)
    if head[:1] == bytes([PICKLE_PROTO]):
        # torch's legacy (pre-1.6, non-zip) format starts with a pickle too; weights_only
        # loading still applies, and a plain pickle is rejected by it.
        return _torch_load(path, mmap=False), {}
    raise SampleError(f"not a torch, safetensors or gzip file (starts with {_describe_head(head)})")


def regular_file_size(path: str) -> int:
    """The size of `path` after links are followed; anything but a regular file is refused
    before it is opened (reading a FIFO blocks forever, a device never ends)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise SampleError("dead symbolic link") from None
        raise SampleError("no such file") from None
    except OSError as err:
        raise SampleError(_os_message(path, err)) from None
    if stat.S_ISDIR(st.st_mode):
        raise SampleError("is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        via = " (behind a symbolic link)" if os.path.islink(path) else ""
        raise SampleError(f"{kind}{via}, not a regular file: not opened")
    return st.st_size


def _os_message(path: str, err: OSError) -> str:
    if isinstance(err, IsADirectoryError):
        return "is a folder, not a file"
    if isinstance(err, FileNotFoundError):
        return "dead symbolic link" if os.path.islink(path) else "no such file"
    if isinstance(err, PermissionError):
        return "permission denied"
    return f"cannot read file: {err.strerror or err}"


def _load_gzip(path: str) -> Any:
    """torch.load of a gzip-wrapped torch file, holding at most MAX_GZIP_BYTES of it.

    The inner bytes are streamed into an in-memory file (memfd) that torch then maps: the
    expanded file exists once, never as a buffer plus a copy of every tensor.
    """
    torch_gate.check(quiet=True)  # before expanding a file that would be refused anyway
    with _inner_file() as (out, name):
        head = b""
        total = 0
        try:
            with gzip.open(path, "rb") as fh:
                while True:
                    chunk = fh.read(_GZIP_STEP)
                    if not chunk:
                        break
                    if len(head) < 4:
                        head += chunk[:16]
                        if len(head) >= 4:
                            _check_inner_magic(head)
                    total += len(chunk)
                    if total > MAX_GZIP_BYTES:
                        raise SampleError(
                            f"gzip file expands to more than {_gib(MAX_GZIP_BYTES)}; refusing "
                            "(decompress it yourself to inspect it)"
                        )
                    out.write(chunk)
        except (OSError, EOFError, zlib.error) as err:
            raise SampleError(f"corrupt or truncated gzip file ({_first_line(err)})") from None
        if total == 0:
            raise SampleError("gzip file is empty inside (0 bytes)")
        _check_inner_magic(head)
        out.flush()
        out.seek(0)
        deflated = head.startswith(ZIP_MAGIC) and check_expansion(out.fileno(), total).deflated
        if name is not None and head.startswith(ZIP_MAGIC) and not deflated:
            return _torch_load(name, mmap=True)
        return _torch_load(out, mmap=False)


def _check_inner_magic(head: bytes) -> None:
    if not head.startswith(ZIP_MAGIC) and head[:1] != bytes([PICKLE_PROTO]):
        raise SampleError(
            f"gzip file does not contain a torch file (inner data starts with {_describe_head(head[:16])})"
        )


@contextlib.contextmanager
def _inner_file():
    """(file object, path torch can mmap or None): a memfd on Linux, else a temporary file."""
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        try:
            fd = os.memfd_create("eagle3-tui-gunzip")
        except OSError:
            fd = None
        if fd is not None:
            with os.fdopen(fd, "w+b") as fh:
                yield fh, f"/proc/self/fd/{fd}"
            return
    with tempfile.TemporaryFile() as fh:
        yield fh, None


def check_tensors(obj: Any) -> None:
    """Refuse tensors the statistics cannot read or must not expand, with a message naming them."""
    for key, t in _tensors(obj, "", depth=0):
        # lazy: torch: loaded when used, never at start-up
        import torch

        where = f"tensor {key!r}" if key else "the tensor"
        shape = list(t.shape)
        if t.layout != torch.strided:
            layout = str(t.layout).removeprefix("torch.")
            kind = "sparse" if "sparse" in layout else "non-strided"
            raise SampleError(f"{where} {shape} is a {kind} tensor ({layout}): only dense tensors hold hidden states")
        if t.device.type == "meta":
            raise SampleError(f"{where} {shape} is a meta tensor: it has a shape but no data")
        # torch.empty(0) is a placeholder some producers write for "not captured" (ModelOpt's vLLM
        # dump without aux layers): the schema decides; a zero-size matrix is nothing to inspect
        if t.is_floating_point() and t.numel() == 0 and t.dim() > 1:
            raise SampleError(f"{where} has a zero-size dimension (shape {shape}): nothing to inspect")
        logical = t.numel() * t.element_size()
        stored = t.untyped_storage().nbytes()
        if logical > stored and logical > MAX_EXPANSION_BYTES:
            raise SampleError(
                f"{where} {shape} would expand {_size(stored)} of stored data to {_size(logical)} "
                f"(strides {list(t.stride())}: stride 0 or overlapping); refusing"
            )


def _tensors(obj: Any, key: str, *, depth: int):
    # lazy: torch: loaded when used, never at start-up
    import torch

    if isinstance(obj, torch.Tensor):
        yield key, obj
    elif depth < 4 and isinstance(obj, dict):
        for k, v in obj.items():
            yield from _tensors(v, f"{key}.{k}" if key else str(k), depth=depth + 1)
    elif depth < 4 and isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _tensors(v, f"{key}[{i}]", depth=depth + 1)


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _gib(n: int) -> str:
    return f"{n / 1024**3:g} GiB"


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:200] if text else type(err).__name__


def _torch_load(src, *, mmap: bool) -> Any:
    """The one torch.load of samples, drafter weights and vocab mappings: behind the gate."""
    torch_gate.check()
    # lazy: torch: loaded when used, never at start-up
    import torch

    if isinstance(src, str) and not _utf8(src):
        # torch passes file names to C++ as strict UTF-8; a name with other bytes (legal on
        # Linux) must be opened here and read through the file object, without mmap.
        with open(src, "rb") as fh:
            return _torch_load(fh, mmap=False)
    try:
        with warnings.catch_warnings():
            # torch's own notes (beta sparse layouts...) would add lines to a one-line answer
            warnings.simplefilter("ignore", UserWarning)
            if mmap:
                return torch.load(src, map_location="cpu", weights_only=True, mmap=True)
            return torch.load(src, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        raise SampleError(_unpickling_message(err)) from None
    except (RuntimeError, EOFError, ValueError, OSError, KeyError, IndexError, TypeError) as err:
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
        if _broken_zip(src) or "central directory" in text or "zip archive" in text or "file not found" in text.lower():
            raise SampleError("truncated or corrupt torch file (zip archive unreadable)") from None
        if "magic number" in text.lower():
            raise SampleError("not a torch.save file (a plain pickle, not torch's format)") from None
        if "TorchScript" in text:
            raise SampleError("a TorchScript archive (a program, not tensors): not loaded") from None
        raise SampleError(f"cannot load torch file: {without_advice(text)[:200]}") from None
    except (SampleError, MemoryError):
        raise
    except Exception as err:  # noqa: BLE001 - whatever torch raises on a hostile file: one line
        raise SampleError(f"cannot load torch file ({type(err).__name__}: {_first_line(err)})") from None


def without_advice(text: str) -> str:
    """torch's message without its advice to load with weights_only=False (never to be taken on
    a file we refused): cut where the advice starts."""
    refused = "safe loading (weights_only) refused the file; nothing was executed"
    marks = [k for k in (text.find(m) for m in ("In PyTorch 2.6", "Weights only load failed",
                                                  "Re-running `torch.load`", "weights_only")) if k >= 0]
    if not marks:
        return text
    return text[: min(marks)].rstrip(" .:;(") or refused


def _broken_zip(src) -> bool:
    """A path that starts like a zip but has no readable end record: a cut-off copy. (mmap of such
    a file fails with a bare "Invalid argument" before torch looks at the archive.)"""
    if isinstance(src, io.BytesIO):
        return src.getvalue()[:4] == b"PK\x03\x04" and not zipfile.is_zipfile(io.BytesIO(src.getvalue()))
    if not isinstance(src, str):
        return False
    try:
        with open(src, "rb") as fh:
            if fh.read(4) != b"PK\x03\x04":
                return False
        return not zipfile.is_zipfile(src)
    except OSError:
        return False


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _unpickling_message(err: Exception) -> str:
    text = str(err)
    found = re.search(r"GLOBAL ([\w.]+)", text)
    if found:
        return (
            f"refused: the file asks to run Python code ({found.group(1)}), which safe loading "
            "(weights_only) does not allow; nothing was executed"
        )
    if "magic number" in text.lower() or "legacy" in text.lower():
        return "not a torch.save file (a plain pickle, not torch's format)"
    # torch's text is advice to load unsafely around the reason: only the reason is kept
    reason = re.search(r"WeightsUnpickler error:\s*(.+)", text)
    first = reason.group(1).strip().splitlines()[0] if reason else without_advice(text.strip().splitlines()[0] if text.strip() else "")
    return f"refused by safe loading: {first[:200] or 'unpickling failed'}; nothing was executed"


def _describe_head(head: bytes) -> str:
    if head and all(32 <= b < 127 or b in (9, 10, 13) for b in head):
        return "text " + repr(head[:12].decode("ascii"))
    return "bytes " + head[:8].hex(" ")
