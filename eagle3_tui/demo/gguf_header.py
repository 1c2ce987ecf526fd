"""gguf's reader, with the header read at numpy's speed rather than field by field.

`gguf.GGUFReader` cuts every value of the header out of an `np.memmap`, one slice per value: a
vocabulary array of N strings is 2N slices and a score array N more, each a memmap slice whose
finalizer runs in Python (~10 us). Gemma 3's 262,144-token vocabulary took ~8 s to read. This
reader gives the same fields (names, types, parts with the same dtypes and bytes, the same data
indices) and the same tensors, cutting its slices from a plain ndarray view of the same map and an
array of numbers in one read. Files in the other byte order go the stock way."""

from __future__ import annotations

import struct
import sys
from typing import Any

# lazy: gguf and numpy come with transformers' GGUF support; this module is imported only to build
# the real model's folder
import gguf
import numpy as np

_ARRAY, _STRING = gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.STRING


class HeaderReader(gguf.GGUFReader):
    _plain: np.ndarray | None = None

    def _get(self, offset: int, dtype: Any, count: int = 1, override_order: Any = None) -> np.ndarray:
        if self._plain is None:
            self._plain = self.data.view(np.ndarray)  # the same bytes, without memmap's finalizer
        count = int(count)
        itemsize = np.dtype(dtype).itemsize
        arr = self._plain[offset:offset + itemsize * count].view(dtype=dtype)[:count]
        return arr.view(arr.dtype.newbyteorder(self.byte_order if override_order is None else override_order))

    def _get_field_parts(self, orig_offs: int, raw_type: int) -> tuple[int, list, list[int], list]:
        if gguf.GGUFValueType(raw_type) != _ARRAY or self.byte_order != "I" or sys.byteorder != "little":
            return super()._get_field_parts(orig_offs, raw_type)
        raw_itype = self._get(orig_offs, np.uint32)
        alen = self._get(orig_offs + 4, np.uint64)
        count, itype = int(alen[0]), gguf.GGUFValueType(raw_itype[0])
        nptype = self.gguf_scalar_to_np.get(itype)
        if count == 0 or (nptype is None and itype != _STRING):
            return super()._get_field_parts(orig_offs, raw_type)
        offs = orig_offs + 12
        parts: list = [raw_itype, alen]
        if nptype is not None:  # numbers: one read, one one-element slice each (as gguf gives them)
            values = self._get(offs, nptype, count)
            parts += [values[i:i + 1] for i in range(count)]
            return 12 + int(values.nbytes), parts, list(range(2, count + 2)), [_ARRAY, itype]
        plain, u64, u8 = self._plain, np.dtype(np.uint64), np.dtype(np.uint8)
        assert plain is not None
        unpack, buffer = struct.Struct("<Q").unpack_from, plain.data
        for _ in range(count):
            (size,) = unpack(buffer, offs)
            parts.append(plain[offs:offs + 8].view(u64))
            parts.append(plain[offs + 8:offs + 8 + size].view(u8))
            offs += 8 + size
        return offs - orig_offs, parts, list(range(3, 2 * count + 2, 2)), [_ARRAY, itype]
