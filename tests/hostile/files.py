"""Hostile inputs, built on the fly (no binary blobs in the repository).

Each builder writes one file and returns the words its one-line error must contain.
"""

from __future__ import annotations

import json
import os
import struct
import warnings
import zlib
from pathlib import Path

import torch


def _safetensors(path: Path, header_bytes: bytes, data: bytes = b"", *, length: int | None = None) -> None:
    n = len(header_bytes) if length is None else length
    path.write_bytes(struct.pack("<Q", n) + header_bytes + data)


def _entry(shape, begin, end, dtype="F32"):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def _st_json(path: Path, header, data: bytes = b"") -> None:
    _safetensors(path, json.dumps(header).encode(), data)


# ------------------------------------------------------------------------- safetensors

def st_metadata_list(p: Path) -> str:
    _st_json(p, {"__metadata__": [1, 2], "hidden_states": _entry([2, 2], 0, 16)}, bytes(16))
    return "__metadata__"


def st_metadata_string(p: Path) -> str:
    _st_json(p, {"__metadata__": "hello", "hidden_states": _entry([2, 2], 0, 16)}, bytes(16))
    return "__metadata__"


def st_header_list(p: Path) -> str:
    _safetensors(p, b'[{"dtype": "F32"}]' + b" " * 6, bytes(16))
    return "header is a JSON list"


def st_nested_deep(p: Path) -> str:
    _safetensors(p, b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}", bytes(8))
    return "nested"


def st_lying_length(p: Path) -> str:
    _safetensors(p, b'{"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', bytes(4), length=10**9)
    return "header length"


def st_negative_shape(p: Path) -> str:
    _st_json(p, {"hidden_states": _entry([-2, -2], 0, 16)}, bytes(16))
    return "negative"


def st_infinite_shape(p: Path) -> str:
    _safetensors(p, b'{"hidden_states": {"dtype": "F32", "shape": [Infinity, 2], "data_offsets": [0, 16]}}', bytes(16))
    return "shape"


def st_float_shape(p: Path) -> str:
    _st_json(p, {"hidden_states": _entry([2.5, 2], 0, 20)}, bytes(20))
    return "shape"


def st_negative_offset(p: Path) -> str:
    _st_json(p, {"hidden_states": _entry([2, 2], -16, 0)}, bytes(16))
    return "offsets"


def st_shape_offsets_disagree(p: Path) -> str:
    _st_json(p, {"hidden_states": _entry([4, 4], 0, 16)}, bytes(64))
    return "do not fit"


def st_past_end(p: Path) -> str:
    _st_json(p, {"hidden_states": _entry([4, 4], 0, 64)}, bytes(16))
    return "past the end"


def st_huge_shape(p: Path) -> str:
    _st_json(p, {"hidden_states": _entry([2**62, 2**62], 0, 16)}, bytes(16))
    return "do not fit"


def st_zero_dim(p: Path) -> str:
    _st_json(p, {"hidden_states": _entry([0, 8], 0, 0)}, b"")
    return "zero"


def st_entry_not_object(p: Path) -> str:
    _st_json(p, {"hidden_states": "F32"}, bytes(16))
    return "hidden_states"


# ------------------------------------------------------------------------------ torch

def pt_zero_width(p: Path) -> str:
    torch.save({"input_ids": torch.arange(8), "aux_hidden_state": torch.zeros(1, 8, 0)}, p)
    return "zero"


def pt_zero_rows_list(p: Path) -> str:
    torch.save([torch.zeros(0, 4), torch.zeros(0, 4)], p)
    return "zero"


def pt_sparse(p: Path) -> str:
    torch.save({"hidden_states": torch.eye(6).to_sparse()}, p)
    return "sparse"


def pt_sparse_csr(p: Path) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "sparse CSR support is in beta"
        torch.save(torch.eye(6).to_sparse_csr(), p)
    return "sparse"


def pt_meta(p: Path) -> str:
    torch.save({"hidden_states": torch.empty(4, 8, device="meta")}, p)
    return "meta"


def pt_stride0(p: Path) -> str:
    """2 KB on disk, 5M x 192 float32 (3.6 GiB) when materialised."""
    torch.save({"hidden_states": torch.zeros(1, 192).expand(5_000_000, 192)}, p)
    return "stride"


# ------------------------------------------------------------------------------- gzip

def _gzip_of_repeats(p: Path, first: bytes, block: bytes, repeats: int) -> None:
    """A gzip member whose body is `first` then `block` x repeats, written in milliseconds:
    after a full flush the deflate output of identical input is identical, so one compressed
    block is repeated. The CRC is left wrong: a reader must refuse long before checking it."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(first) + c.flush(zlib.Z_FULL_FLUSH)
    body = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    tail = c.flush(zlib.Z_FINISH)
    size = len(first) + len(block) * repeats
    with open(p, "wb") as fh:
        fh.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + head)
        for _ in range(repeats):
            fh.write(body)
        fh.write(tail + struct.pack("<II", 0, size & 0xFFFFFFFF))


def gz_bomb(p: Path) -> str:
    """Starts like a torch zip, expands to 9 GiB."""
    mib = 1 << 20
    _gzip_of_repeats(p, b"PK\x03\x04" + bytes(mib - 4), bytes(mib), 9 * 1024 - 1)
    return "GiB"


def gz_zeros(p: Path) -> str:
    """Zeros all the way (~14 MB compressed, ~14 GiB expanded): not a torch file, seen at once."""
    mib = 1 << 20
    _gzip_of_repeats(p, bytes(mib), bytes(mib), 14 * 1024)
    return "gzip file does not contain a torch file"


# -------------------------------------------------------------------- not regular files

def fifo(p: Path) -> str:
    os.mkfifo(p)
    return "FIFO"


def dev_zero_link(p: Path) -> str:
    os.symlink("/dev/zero", p)
    return "device"


SAFETENSORS = [f for n, f in sorted(globals().items()) if n.startswith("st_")]
TORCH = [f for n, f in sorted(globals().items()) if n.startswith("pt_")]
GZIP = [gz_bomb, gz_zeros]
SPECIAL = [fifo, dev_zero_link]
ALL = SAFETENSORS + TORCH + GZIP + SPECIAL
