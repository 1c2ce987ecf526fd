"""The structure of a torch.save zip read without torch.load, for the quick scan
(engines/scan/budget.py): what `torch.load(f, weights_only=True)` returns, its tensors structure-only
("meta", each storage's offset in the file as `_checkpoint_offset`), at a tenth of the CPU.

A second reader of a format anyone can write is only right when it accepts a strict subset of what
the trusted reader accepts and reads it the same way; so this one takes a file only when

- the zip is laid out exactly as torch's writer lays it out, every record's local header read and
  checked, each record found by the name torch's reader finds it by (engines/read/zip_archive.py);
- the version record is one torch reads (1 to 3), the byte order little, the storage alignment a
  power of two, the serialization id digits;
- data.pkl is a protocol 2 pickle of the opcodes and globals torch's weights-only unpickler reads,
  bounded in nodes with sharing expanded (engines/read/pickle_walk.py);
- every storage the pickle names is a record of exactly its size, and every tensor lies inside its
  storage.

Anything else raises NotStatic, and the caller reads the file with torch.load(weights_only=True)
whole, behind the torch gate; never with torch's "meta" load, which computes offsets nobody checks
and crashes on some files. tests/hostile/test_quick_vs_torch.py holds it so on crafted files.

The files of a shard share their layout (zip_layout.py) and their pickle: both are remembered, so
the usual file costs a comparison of the bytes that decide its parse.

Standard library only; torch is imported when a tensor is built (the caller has it loaded).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from typing import Any

from eagle3_tui.engines.read.pickle_walk import Storage, Tensor, walk
from eagle3_tui.engines.read.zip_archive import TAIL_BYTES, Archive, NotStatic
from eagle3_tui.engines.read.zip_layout import Layout

__all__ = ["MAX_PICKLE_BYTES", "TAIL_BYTES", "NotStatic", "read_structure"]

#: a pickle larger than this is not a sample's (a few hundred bytes): torch.load reads it
MAX_PICKLE_BYTES = 1 << 20
#: walks of pickles up to this size are kept for the next file with the same one (64 at most)
WALK_CACHE_BYTES = 16 << 10
#: the file format versions torch 2.13's reader accepts and torch.save has written (kProduced 3)
_VERSION = re.compile(rb"[1-3]\n?")
_ALIGNMENT = re.compile(rb"[1-9][0-9]{0,6}")

#: data.pkl -> what walk() made of it: the files of a dataset mostly share one (same keys and shapes)
_WALKED: dict[bytes, tuple[Any, list]] = {}
#: (data.pkl, its storages' offsets) -> the object read_structure returned for them (shared: read only)
_BUILT: dict[tuple[bytes, tuple[int, ...]], Any] = {}
#: the layout of the last file read in full (zip_layout.Layout), or None
_LAST_LAYOUT: list[Layout | None] = [None]


def read_structure(pread: Callable[[int, int], bytes], size: int) -> Any:
    """What torch.load(file, weights_only=True) returns for torch's zip of `size` bytes read with
    pread(n, offset), its tensors structure-only, without unpickling; NotStatic when this reader
    does not take the file (the caller then loads it with torch.load). A file laid out as one read
    before (the same pickle, its storages at the same offsets) gets the very same object back:
    callers read it, never change it."""
    try:
        z = Archive(pread, size)
        layout = _LAST_LAYOUT[0]
        if layout is not None and layout.matches(z):
            return layout.built
        z.check()
        _check_small_records(z)
        if not z.has("data.pkl") or z.records["data.pkl"][1] > MAX_PICKLE_BYTES:
            raise NotStatic("no data.pkl, or a large one")
        pickle = z.record("data.pkl")
        walked = _WALKED.get(pickle)
        if walked is None:
            walked = walk(pickle)
            if len(pickle) <= WALK_CACHE_BYTES:
                if len(_WALKED) >= 64:
                    _WALKED.clear()
                    _BUILT.clear()
                _WALKED[pickle] = walked
        obj, storages = walked
        placed = _placed(z, storages)
        # the files of a shard share their pickle and, same shapes, their storages' offsets: the
        # object built for the one before is this one's too (structure-only tensors, never written)
        key = (pickle, placed)
        built = _BUILT.get(key)
        if built is None:
            built = _build(obj, placed)
            if len(pickle) <= WALK_CACHE_BYTES:
                if len(_BUILT) >= 64:
                    _BUILT.clear()
                _BUILT[key] = built
        _LAST_LAYOUT[0] = Layout(z, built)
        return built
    except NotStatic:
        raise
    except (struct.error, ValueError, IndexError, KeyError, UnicodeDecodeError, RuntimeError, TypeError,
            OverflowError, MemoryError) as err:
        raise NotStatic(f"{type(err).__name__}: {str(err)[:200]}") from None


def _check_small_records(z: Archive) -> None:
    """What torch's reader reads and parses besides data.pkl, as torch.save writes it."""
    if not z.has("version") or not _VERSION.fullmatch(z.record("version")):
        raise NotStatic("a version record torch.save does not write")
    if z.has("byteorder") and z.record("byteorder") != b"little":
        raise NotStatic("not a little-endian file")
    if z.has(".storage_alignment"):
        alignment = z.record(".storage_alignment")
        if not _ALIGNMENT.fullmatch(alignment) or int(alignment) & (int(alignment) - 1):
            raise NotStatic("an odd storage alignment")
    if z.has(".format_version") and not z.record(".format_version").isdigit():
        raise NotStatic("an odd format version")
    if z.has(".data/serialization_id") and not z.digits(".data/serialization_id"):
        raise NotStatic("an odd serialization id")  # torch hands it to Python as UTF-8 text


def _placed(z: Archive, storages: list[Storage]) -> tuple[int, ...]:
    """Each storage's data offset in the file: its record's, which must hold exactly its bytes;
    every record data/<key> the file has is one the pickle names."""
    offsets = []
    for st in storages:
        found = z.records.get(f"data/{st.key}")
        if found is None or found[1] != st.nbytes:
            raise NotStatic("a storage without a record of its size")
        offsets.append(found[0])
    if sum(name.startswith("data/") for name in z.records) != len(storages):
        raise NotStatic("a storage record the pickle does not name")
    return tuple(offsets)


def _build(obj: Any, offsets: tuple[int, ...]) -> Any:
    """The walked object with its tensors made (structure-only, each storage at its offset)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if isinstance(obj, Tensor):
        st = obj.storage
        _inside(obj)
        if obj.offset == 0 and obj.dtype == st.dtype and _extent(obj.size, obj.stride) * st.dtype.itemsize == st.nbytes:
            # the tensor is its whole storage (the usual case): one call makes both
            t = torch.empty_strided(obj.size, obj.stride, dtype=obj.dtype, device="meta")
            untyped = t.untyped_storage()
        else:
            untyped = torch.UntypedStorage(st.nbytes, device="meta")
            t = torch.empty((0,), dtype=obj.dtype, device="meta")
            t.set_(untyped, obj.offset, obj.size, obj.stride)  # torch checks the extent against the storage
        untyped._checkpoint_offset = offsets[st.index]
        if obj.requires_grad:
            t.requires_grad = True
        return t
    if isinstance(obj, dict):
        out = type(obj)()
        for k, v in obj.items():
            out[k] = _build(v, offsets)
        return out
    if isinstance(obj, list):
        return [_build(v, offsets) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_build(v, offsets) for v in obj)
    return obj


def _inside(t: Tensor) -> None:
    """NotStatic unless the tensor lies inside its storage, no element twice: torch's own set_
    refuses a tensor past its storage (a structure-only one would not), and the full load refuses
    one whose strides repeat elements past a cap (load.check_tensors)."""
    if t.offset < 0 or any(n < 0 for n in t.size) or any(s < 0 for s in t.stride):
        raise NotStatic("a tensor with a negative offset, size or stride")
    numel = 1
    for n in t.size:
        numel *= n
    extent = _extent(t.size, t.stride)
    if (t.offset + extent) * t.dtype.itemsize > t.storage.nbytes or (numel and numel > extent):
        raise NotStatic("a tensor past its storage, or one that repeats elements")


def _extent(size: tuple, stride: tuple) -> int:
    """Elements from a tensor's first to past its last (0 when it has none)."""
    if 0 in size:
        return 0
    return sum((n - 1) * s for n, s in zip(size, stride)) + 1
