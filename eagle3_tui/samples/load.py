"""Read a file safely and turn it into a Sample.

Safety: every pickle-based file goes through torch.load(..., weights_only=True), passed
explicitly, with no fallback to unsafe loading. The format is sniffed from the first bytes,
never from the extension. Each failure becomes a SampleError with a one-line message.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from typing import Any

from eagle3_tui.samples.safetensors_file import looks_like_safetensors, read_safetensors
from eagle3_tui.samples.sample import Sample, SampleError
from eagle3_tui.samples.schema import normalize

ZIP_MAGIC = b"PK\x03\x04"
GZIP_MAGIC = b"\x1f\x8b"
PICKLE_PROTO = 0x80
MAX_GZIP_BYTES = 8 * 1024**3


def load_sample(path: str, *, slots: int | None = None, hidden: int | None = None) -> Sample:
    obj, extra = read_object(path)
    return normalize(obj, path=path, slots=slots, hidden=hidden, metadata=extra)


def read_object(path: str) -> tuple[Any, dict[str, str]]:
    """The Python object stored in `path` (tensors, dicts, lists), and safetensors metadata."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(16)
    except IsADirectoryError:
        raise SampleError("is a folder, not a file") from None
    except FileNotFoundError:
        if os.path.islink(path):
            raise SampleError("dead symbolic link") from None
        raise SampleError("no such file") from None
    except PermissionError:
        raise SampleError("permission denied") from None
    except OSError as err:
        raise SampleError(f"cannot read file: {err.strerror or err}") from None

    if size == 0:
        raise SampleError("empty file (0 bytes)")
    if head.startswith(ZIP_MAGIC):
        return _torch_load(path, mmap=True), {}
    if head.startswith(GZIP_MAGIC):
        return _torch_load(_gunzip(path), mmap=False), {}
    if looks_like_safetensors(head, size):
        return read_safetensors(path)
    if head[:1] == bytes([PICKLE_PROTO]):
        # torch's legacy (pre-1.6, non-zip) format starts with a pickle too; weights_only
        # loading still applies, and a plain pickle is rejected by it.
        return _torch_load(path, mmap=False), {}
    raise SampleError(f"not a torch, safetensors or gzip file (starts with {_describe_head(head)})")


def _gunzip(path: str) -> io.BytesIO:
    try:
        with gzip.open(path, "rb") as fh:
            data = fh.read(MAX_GZIP_BYTES + 1)
    except (OSError, EOFError, zlib.error) as err:
        raise SampleError(f"corrupt or truncated gzip file ({err})") from None
    if len(data) > MAX_GZIP_BYTES:
        raise SampleError("gzip file expands to more than 8 GiB; refusing")
    if not data.startswith(ZIP_MAGIC) and data[:1] != bytes([PICKLE_PROTO]):
        raise SampleError(
            f"gzip file does not contain a torch file (inner data starts with {_describe_head(data[:16])})"
        )
    return io.BytesIO(data)


def _torch_load(src, *, mmap: bool) -> Any:
    import pickle

    import torch

    if isinstance(src, str) and not _utf8(src):
        # torch passes file names to C++ as strict UTF-8; a name with other bytes (legal on
        # Linux) must be opened here and read through the file object, without mmap.
        with open(src, "rb") as fh:
            return _torch_load(fh, mmap=False)
    try:
        if mmap:
            return torch.load(src, map_location="cpu", weights_only=True, mmap=True)
        return torch.load(src, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        raise SampleError(_unpickling_message(err)) from None
    except (RuntimeError, EOFError, ValueError, OSError, KeyError, IndexError, TypeError) as err:
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
        if "central directory" in text or "zip archive" in text or "file not found" in text.lower():
            raise SampleError("truncated or corrupt torch file (zip archive unreadable)") from None
        if "magic number" in text.lower():
            raise SampleError("not a torch.save file (a plain pickle, not torch's format)") from None
        raise SampleError(f"cannot load torch file: {text[:200]}") from None


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
    first = text.strip().splitlines()[0] if text.strip() else "unpickling failed"
    return f"refused by safe loading: {first[:200]}"


def _describe_head(head: bytes) -> str:
    if head and all(32 <= b < 127 or b in (9, 10, 13) for b in head):
        return "text " + repr(head[:12].decode("ascii"))
    return "bytes " + head[:8].hex(" ")
