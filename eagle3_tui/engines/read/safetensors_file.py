"""A minimal, read-only safetensors reader on torch + stdlib (the remote box may lack `safetensors`).

The format: 8-byte little-endian header length N, N bytes of JSON header
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then the data.
Tensors are views of a read-only memory map: nothing is copied until used.
"""

from __future__ import annotations

import json
import mmap
import struct
import warnings
from typing import TYPE_CHECKING, Any

from eagle3_tui.engines.read.sample import SampleError

if TYPE_CHECKING:
    from torch import Tensor

_DTYPES = {
    "F64": "float64",
    "F32": "float32",
    "F16": "float16",
    "BF16": "bfloat16",
    "I64": "int64",
    "I32": "int32",
    "I16": "int16",
    "I8": "int8",
    "U8": "uint8",
    "BOOL": "bool",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
}

MAX_HEADER = 100 * 1024 * 1024


def looks_like_safetensors(head: bytes, file_size: int) -> bool:
    """An 8-byte length then a JSON object or list: taken as safetensors, so that a lying length
    or a header of the wrong shape is named as such instead of as an unknown format."""
    if len(head) < 9:
        return False
    (n,) = struct.unpack("<Q", head[:8])
    return n >= 2 and head[8:9] in (b"{", b"[")


def read_safetensors(path: str) -> tuple[dict[str, Tensor], dict[str, str]]:
    """Return ({name: tensor}, metadata). Raises SampleError on a malformed file."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(0)
        raw_len = fh.read(8)
        if len(raw_len) < 8:
            raise SampleError("truncated safetensors file (no header)")
        (n,) = struct.unpack("<Q", raw_len)
        if n > size - 8:
            raise SampleError(
                f"corrupt safetensors file: the header length says {n} bytes but the file holds "
                f"only {size - 8} after it"
            )
        if n > MAX_HEADER:
            raise SampleError(f"corrupt safetensors file: a header of {n} bytes (more than 100 MiB)")
        header = _parse_header(fh.read(n))
        data_start = 8 + n
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size > data_start else None

    metadata = header.pop("__metadata__", None)
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise SampleError(
            f"corrupt safetensors file: __metadata__ is a {_json_kind(metadata)}, not an object"
        )
    tensors: dict[str, Tensor] = {}
    for name, info in header.items():
        dtype, shape, begin, end = _entry(name, info)
        dtype = getattr(torch, dtype)
        count = 1
        for d in shape:
            count *= d
        itemsize = torch.empty((), dtype=dtype).element_size()
        if end - begin != count * itemsize:
            raise SampleError(
                f"corrupt safetensors file: tensor {name!r} of shape {shape} {info['dtype']} needs "
                f"{_nbytes(count * itemsize, size)} but its data_offsets span {end - begin}: they do not fit"
            )
        if data_start + end > size:
            raise SampleError(
                f"truncated safetensors file: tensor {name!r} ends at byte {data_start + end}, "
                f"past the end of the file ({size} bytes)"
            )
        if count == 0 or mm is None:
            tensors[name] = torch.empty(shape, dtype=dtype)
            continue
        with warnings.catch_warnings():
            # the map is read-only on purpose: we never write to the dataset
            warnings.simplefilter("ignore", UserWarning)
            flat = torch.frombuffer(mm, dtype=dtype, count=count, offset=data_start + begin)
        tensors[name] = flat.view(shape)
    return tensors, {str(k): str(v) for k, v in metadata.items()}


def _parse_header(raw: bytes) -> dict[str, Any]:
    try:
        header = json.loads(raw)
    except RecursionError:
        raise SampleError("corrupt safetensors file: the header JSON is nested too deeply") from None
    except ValueError as err:
        raise SampleError(f"corrupt safetensors file: the header is not JSON ({err})") from None
    if not isinstance(header, dict):
        raise SampleError(f"corrupt safetensors file: the header is a JSON {_json_kind(header)}, not an object")
    return header


def _entry(name: str, info: Any) -> tuple[str, list[int], int, int]:
    """(torch dtype name, shape, begin, end) of one header entry, each checked."""
    what = f"corrupt safetensors file: tensor {name!r}"
    if not isinstance(info, dict):
        raise SampleError(f"{what} is described by a {_json_kind(info)}, not an object")
    if info.get("dtype") not in _DTYPES:
        raise SampleError(f"{what} has an unknown dtype {str(info.get('dtype'))[:40]!r}")
    shape = info.get("shape")
    if not isinstance(shape, list) or not all(_whole(d) and d >= 0 for d in shape):
        raise SampleError(f"{what} has shape {_short(shape)}: dimensions must be whole numbers >= 0 (negative, fractional or infinite given)")
    offsets = info.get("data_offsets")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_whole(v) for v in offsets)
            and 0 <= offsets[0] <= offsets[1]):
        raise SampleError(f"{what} has data_offsets {_short(offsets)}: expected [begin, end] with 0 <= begin <= end")
    return _DTYPES[info["dtype"]], shape, offsets[0], offsets[1]


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _json_kind(v: Any) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if v is None else names.get(type(v), type(v).__name__)


def _short(v: Any) -> str:
    text = json.dumps(v) if not isinstance(v, float) else repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _nbytes(n: int, file_size: int) -> str:
    return f"{n} bytes" if n <= file_size else f"{n} bytes, more than the whole file" if n < 10**15 else "more bytes than any file holds"
