"""Small hand-built sample tensors, seeded, and safetensors written by hand (the format is tiny)."""

from __future__ import annotations

import json
import struct

import torch

T, H, K = 12, 16, 3


def make_tensors(seed: int = 0, t: int = T, h: int = H, k: int = K, pad: int = 0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 1000, (t,), generator=g)
    mask = torch.ones(t, dtype=torch.int64)
    mask[:3] = 0  # the prompt is not trained on
    if pad:
        ids[-pad:] = 0
        mask[-pad:] = 0
    aux = [torch.randn(t, h, generator=g) * (i + 1) for i in range(k)]
    final = torch.randn(t, h, generator=g)
    return ids, mask, aux, final


def write_safetensors(path, tensors: dict[str, torch.Tensor], metadata=None) -> None:
    """Hand-written safetensors (the format is tiny): header length, JSON header, raw bytes."""
    names = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16", torch.int64: "I64"}
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        raw = t.contiguous().view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    hb = json.dumps(header).encode()
    hb += b" " * (-len(hb) % 8)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(hb)) + hb + b"".join(blobs))
