"""A scan record's fingerprint: equal for files with the same ids and the same states, so the scan
finds duplicate samples; hashed from the bytes as stored, the same in quick and full records.

torch and the standard library only (shipped to the remote box by the agent).
"""

from __future__ import annotations

import hashlib


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
