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
from typing import Any

from eagle3_tui.samples.sample import SampleError

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
    if len(head) < 9:
        return False
    (n,) = struct.unpack("<Q", head[:8])
    return 2 <= n <= min(MAX_HEADER, file_size - 8) and head[8:9] == b"{"


def read_safetensors(path: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Return ({name: tensor}, metadata). Raises SampleError on a malformed file."""
    import torch

    with open(path, "rb") as fh:
        raw_len = fh.read(8)
        if len(raw_len) < 8:
            raise SampleError("truncated safetensors file (no header)")
        (n,) = struct.unpack("<Q", raw_len)
        header_bytes = fh.read(n)
        if len(header_bytes) < n:
            raise SampleError("truncated safetensors file (header cut short)")
        try:
            header = json.loads(header_bytes)
        except ValueError:
            raise SampleError("corrupt safetensors file (header is not JSON)") from None
        fh.seek(0, 2)
        size = fh.tell()
        data_start = 8 + n
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size > data_start else None

    metadata = header.pop("__metadata__", None) or {}
    tensors: dict[str, Any] = {}
    for name, info in header.items():
        try:
            dtype = getattr(torch, _DTYPES[info["dtype"]])
            shape = [int(d) for d in info["shape"]]
            begin, end = (int(v) for v in info["data_offsets"])
        except (KeyError, TypeError, ValueError, AttributeError):
            raise SampleError(f"corrupt safetensors file (bad entry for {name!r})") from None
        count = 1
        for d in shape:
            count *= d
        itemsize = torch.empty((), dtype=dtype).element_size()
        if end - begin != count * itemsize or data_start + end > size or begin < 0:
            raise SampleError(f"truncated or corrupt safetensors file (tensor {name!r} out of bounds)")
        if count == 0 or mm is None:
            tensors[name] = torch.empty(shape, dtype=dtype)
            continue
        with warnings.catch_warnings():
            # the map is read-only on purpose: we never write to the dataset
            warnings.simplefilter("ignore", UserWarning)
            flat = torch.frombuffer(mm, dtype=dtype, count=count, offset=data_start + begin)
        tensors[name] = flat.view(shape)
    return tensors, {str(k): str(v) for k, v in metadata.items()}
