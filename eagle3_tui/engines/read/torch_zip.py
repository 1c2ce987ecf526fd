"""The structure of a torch.save zip read without torch.load: the zip's directory parsed here and
data.pkl's opcodes walked statically, for the quick scan (engines/scan/budget.py).

`torch.load(f, map_location="meta", weights_only=True)` of a real sample costs ~1 ms of CPU, most
of it torch's pure-Python weights-only unpickler and its per-storage machinery, for a pickle of a
few hundred bytes. This walk gives the same object (dicts, lists, tuples, numbers, strings and
structure-only "meta" tensors whose storages carry `_checkpoint_offset`, their offset in the file)
for a fraction of that, and it is safer than any unpickler: it executes nothing. Its opcodes build
only containers and scalars, and the only globals it knows are the tensor-and-container allowlist:

- torch._utils._rebuild_tensor_v2 / _rebuild_tensor_v3 (no metadata, no hooks),
- torch.<X>Storage (the typed storages), torch.storage.UntypedStorage, torch.<dtype>,
- collections.OrderedDict (called with no arguments).

Anything else (another global, a BUILD, an opcode it does not know, a compressed or encrypted
record, a big-endian file, a TorchScript archive, storages not laid out as torch's writer lays
them out) raises NotStatic, and the caller hands the file to torch.load(weights_only=True) behind
the torch gate, as before: what is refused is refused there, with the same one line.

It reads the same bytes torch.load(map_location="meta") reads (the first page, the last 4 KiB,
the small records, the local header of storage 0) and computes the other storages' offsets the way
torch does for a file of format version 1 (torch/serialization.py `_get_offset`, torch 2.13.0), with
one check more: each computed local header must be where the central directory says it is.

Standard library only; torch is imported when a tensor is built (the caller has it loaded).
"""

from __future__ import annotations

import struct
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"
_CENTRAL_ENTRY = struct.Struct("<4s6H3I5HII")
_U32 = 0xFFFFFFFF
#: what torch's zip reader (miniz) reads of the file's end to find its directory
TAIL_BYTES = 4096
#: a pickle larger than this is not a sample's (a few hundred bytes): torch.load reads it
MAX_PICKLE_BYTES = 1 << 20
#: walks of pickles up to this size are kept for the next file with the same one (64 at most)
WALK_CACHE_BYTES = 16 << 10


class NotStatic(Exception):
    """Not a file this reader takes: torch.load (weights_only, behind the gate) reads it."""


# ------------------------------------------------------------------------------------ the zip


class _Zip:
    """torch's zip: its records (name -> local header offset, size) and reads served from the first
    page and the tail when they lie there (pages read once, as torch's reader reads them)."""

    def __init__(self, pread: Callable[[int, int], bytes], size: int):
        self.pread, self.size = pread, size
        self.head = pread(min(size, TAIL_BYTES), 0)
        self.tail_at = max(0, size - TAIL_BYTES)
        self.tail = pread(size - self.tail_at, self.tail_at)
        # what the parse read and depends on (file ranges), and what of it it does not use or may
        # differ between files laid out alike (the CRCs; the archive folder, the file's own name,
        # at `named`): what _Layout compares the next file with
        self.used: list[tuple[int, int]] = []
        self.unused: list[tuple[int, int]] = []
        self.named: list[int] = []
        self.elsewhere = False  # read something outside the first page and the last 4 KiB

    def parse(self) -> None:
        self.records = self._directory()
        first = next(iter(self.records), "")
        if "/" not in first:
            raise NotStatic("no archive folder")
        self.prefix = first.split("/", 1)[0] + "/"

    def read(self, n: int, at: int, use: bool = True) -> bytes:
        """n bytes at `at`; use False: read as torch reads them, the value unused."""
        if at + n <= len(self.head) or (at >= self.tail_at and at + n <= self.size):
            if use:
                self.used.append((at, at + n))
            if at + n <= len(self.head):
                return self.head[at : at + n]
            return self.tail[at - self.tail_at : at - self.tail_at + n]
        self.elsewhere = True
        data = self.pread(n, at)
        if len(data) != n:
            raise NotStatic("the file ends early")
        return data

    def _directory(self) -> dict[str, tuple[int, int]]:
        tail = self.tail
        at = tail.rfind(_EOCD)
        if at < 0 or len(tail) - at < 22:
            raise NotStatic("no end of central directory in the last 4 KiB")
        # from the end record on: the same in a file laid out alike (where rfind finds it too,
        # since no later byte differs); before it, the zip64 locator when there is one
        self.used.append((self.tail_at + max(0, at - 20), self.size))
        _, disk, cd_disk, _, entries, cd_size, cd_offset, comment = struct.unpack("<4s4H2IH", tail[at : at + 22])
        if at + 22 + comment != len(tail) or disk or cd_disk:
            raise NotStatic("an odd end record")
        loc = at - 20
        if loc >= 0 and tail[loc : loc + 4] == _EOCD64_LOCATOR:
            (eocd64,) = struct.unpack("<Q", tail[loc + 8 : loc + 16])
            rec = self.read(56, eocd64)
            if rec[:4] != _EOCD64:
                raise NotStatic("a broken zip64 end record")
            entries, cd_size, cd_offset = struct.unpack("<QQQ", rec[32:56])
        if cd_offset + cd_size > self.size or entries > 4096:
            raise NotStatic("the directory lies outside the file")
        cd = self.read(cd_size, cd_offset)
        records: dict[str, tuple[int, int]] = {}
        pos = 0
        for _ in range(entries):
            (sig, _, _, flags, method, _, _, _, csize, usize, name_len, extra_len, comment_len, _, _, _,
             offset) = _CENTRAL_ENTRY.unpack_from(cd, pos)
            if sig != _CENTRAL:
                raise NotStatic("a broken central directory")
            self.unused.append((cd_offset + pos + 16, cd_offset + pos + 20))  # the CRC
            self.named.append(cd_offset + pos + 46)
            pos += 46
            name = cd[pos : pos + name_len].decode("utf-8", "replace")
            extra = cd[pos + name_len : pos + name_len + extra_len]
            pos += name_len + extra_len + comment_len
            if _U32 in (csize, usize, offset):
                usize, csize, offset = _zip64(extra, usize, csize, offset)
            if method != 0 or flags & 1 or csize != usize:
                raise NotStatic("a compressed or encrypted record")
            records[name] = (offset, usize)
        return records

    def has(self, name: str) -> bool:
        return self.prefix + name in self.records

    def data_offset(self, name: str) -> int:
        """Where record `name`'s bytes start: after its local header (read)."""
        header, size = self.records[self.prefix + name]
        local = self.read(30, header)
        self.unused.append((header + 14, header + 18))  # the CRC
        if local[:4] != _LOCAL:
            raise NotStatic("a broken local header")
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        start = header + 30 + name_len + extra_len
        if start + size > self.size:
            raise NotStatic("a record past the end of the file")
        return start

    def record(self, name: str, use: bool = True) -> bytes:
        size = self.records[self.prefix + name][1]
        return self.read(size, self.data_offset(name), use)


def _zip64(extra: bytes, usize: int, csize: int, offset: int) -> tuple[int, int, int]:
    pos = 0
    while pos + 4 <= len(extra):
        tag, n = struct.unpack("<HH", extra[pos : pos + 4])
        if tag == 1:
            vals = list(struct.unpack(f"<{n // 8}Q", extra[pos + 4 : pos + 4 + n - n % 8]))
            if usize == _U32 and vals:
                usize = vals.pop(0)
            if csize == _U32 and vals:
                csize = vals.pop(0)
            if offset == _U32 and vals:
                offset = vals.pop(0)
            return usize, csize, offset
        pos += 4 + n
    raise NotStatic("a zip64 record without its sizes")


class _Offsets:
    """Each storage's offset in the file, as torch.load(map_location="meta") finds it."""

    def __init__(self, z: _Zip):
        self.z = z
        self.calculate = z.has(".format_version") and z.record(".format_version") >= b"1"
        self.alignment = int(z.record(".storage_alignment")) if z.has(".storage_alignment") else 64
        self.done: dict[str, int] = {}
        self.cursor: int | None = None

    def of(self, key: str, nbytes: int) -> int:
        name = f"data/{key}"
        if name in self.done:
            return self.done[name]
        full = self.z.prefix + name
        if full not in self.z.records or self.z.records[full][1] < nbytes:
            raise NotStatic("a storage without its record")
        if not self.calculate:
            offset = self.z.data_offset(name)
        elif self.cursor is None:
            if key != "0":
                raise NotStatic("storages out of order")  # torch.load raises here too
            offset, header = self.z.data_offset(name), self.z.records[full][0]
        else:
            # torch's writer (pytorch caffe2/serialize/inline_container.cc, detail::getPadding; the
            # next header after the data and its descriptor as torch/serialization.py _get_offset
            # has it, torch 2.13.0 lines 2046-2090): local header, name, the padding extra ("FB" +
            # length), zip64 fields when large, then the data at the storage alignment
            header = self.cursor
            if header != self.z.records[full][0]:
                raise NotStatic("a storage not where torch's writer puts it")
            start = header + 30 + len(full) + 4
            if nbytes >= _U32 or header >= _U32:
                start += 4 + (16 if nbytes >= _U32 else 0) + (8 if header >= _U32 else 0)
            offset = -(-start // self.alignment) * self.alignment
        if self.calculate:
            self.cursor = offset + nbytes + ((24 if header >= _U32 or nbytes >= _U32 else 16) if nbytes else 0)
        self.done[name] = offset
        return offset


# ------------------------------------------------------------------------------------ the pickle


class _Global:
    __slots__ = ("name", "value")

    def __init__(self, name: str, value: Any = None):
        self.name, self.value = name, value


class _Storage:
    """A persistent id of data.pkl: the i-th storage the pickle names, of (key, dtype, bytes)."""

    __slots__ = ("index", "key", "dtype", "nbytes")

    def __init__(self, index: int, key: str, dtype, nbytes: int):
        self.index, self.key, self.dtype, self.nbytes = index, key, dtype, nbytes


class _Tensor:
    """A tensor of data.pkl: built (on "meta") when the file's storages are placed."""

    __slots__ = ("storage", "offset", "size", "stride", "requires_grad", "dtype")

    def __init__(self, storage: _Storage, offset: int, size: tuple, stride: tuple, requires_grad: bool, dtype):
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride
        self.requires_grad, self.dtype = requires_grad, dtype


#: data.pkl -> what walk() made of it: the files of a dataset mostly share one (same keys and shapes)
_WALKED: dict[bytes, tuple[Any, list]] = {}
#: (data.pkl, its storages' offsets) -> the object read_structure returned for them (shared: read only)
_BUILT: dict[tuple[bytes, tuple[int, ...]], Any] = {}
_TYPES: dict[tuple[str, str], _Global | None] = {}


def _allowed(module: str, name: str) -> _Global | None:
    """What a GLOBAL of data.pkl stands for when it is on the allowlist (tensor rebuilds, storage
    types, dtypes, OrderedDict), else None. Looked up in torch's namespace dict, never with
    getattr (torch's module __getattr__ would import submodules for a name the file chose)."""
    found = _TYPES.get((module, name))
    if found is not None or (module, name) in _TYPES:
        return found
    if module == "torch":
        # lazy: torch: loaded when used, never at start-up
        import torch

        obj = vars(torch).get(name)
        if isinstance(obj, torch.dtype):
            found = _Global("dtype", obj)
        elif name.endswith("Storage") and isinstance(obj, type) and issubclass(obj, torch.storage._LegacyStorage):
            with warnings.catch_warnings():  # a typed storage's dtype says TypedStorage is deprecated
                warnings.simplefilter("ignore")
                found = _Global("storage", obj.dtype)
    if len(_TYPES) < 1024:
        _TYPES[module, name] = found
    return found


def _known() -> None:
    # lazy: torch: loaded when used, never at start-up
    import torch

    _TYPES["torch.storage", "UntypedStorage"] = _TYPES["torch", "UntypedStorage"] = _Global("storage", torch.uint8)
    _TYPES["torch._utils", "_rebuild_tensor_v2"] = _Global("v2")
    _TYPES["torch._utils", "_rebuild_tensor_v3"] = _Global("v3")
    _TYPES["collections", "OrderedDict"] = _Global("OrderedDict")


def _tensor(storage: _Storage, offset: Any, size: Any, stride: Any, requires_grad: Any, dtype=None) -> _Tensor:
    if not (type(offset) is int and _ints(size) and _ints(stride) and len(size) == len(stride)
            and isinstance(requires_grad, bool)):
        raise NotStatic("odd tensor arguments")
    if not isinstance(storage, _Storage):
        raise NotStatic("a tensor without a storage")
    return _Tensor(storage, offset, size, stride, requires_grad, storage.dtype if dtype is None else dtype)


def _build(obj: Any, offsets: list[int]) -> Any:
    """The walked object with its tensors made (structure-only, each storage at its offset)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if isinstance(obj, _Tensor):
        st = obj.storage
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


def _extent(size: tuple, stride: tuple) -> int:
    """Elements from a tensor's first to past its last (0 when it has none)."""
    if 0 in size:
        return 0
    return sum((n - 1) * s for n, s in zip(size, stride)) + 1


def _ints(x: Any) -> bool:
    return isinstance(x, tuple) and all(type(v) is int for v in x)


def walk(data: bytes) -> tuple[Any, list[_Storage]]:
    """The object data.pkl describes (its tensors as _Tensor) and the storages it names in order,
    its opcodes interpreted without executing anything."""
    if not _TYPES:
        _known()
    storages: list[_Storage] = []
    stack: list = []
    marks: list[int] = []
    memo: dict[int, Any] = {}
    n = len(data)
    pos = 0
    unpack = struct.unpack_from
    while pos < n:
        op = data[pos]
        pos += 1
        if op == 0x71:  # BINPUT
            memo[data[pos]] = stack[-1]
            pos += 1
        elif op == 0x68:  # BINGET
            stack.append(memo[data[pos]])
            pos += 1
        elif op == 0x58:  # BINUNICODE
            (k,) = unpack("<I", data, pos)
            stack.append(data[pos + 4 : pos + 4 + k].decode("utf-8"))
            pos += 4 + k
        elif op == 0x8C:  # SHORT_BINUNICODE
            k = data[pos]
            stack.append(data[pos + 1 : pos + 1 + k].decode("utf-8"))
            pos += 1 + k
        elif op == 0x4B:  # BININT1
            stack.append(data[pos])
            pos += 1
        elif op == 0x4D:  # BININT2
            stack.append(data[pos] | data[pos + 1] << 8)
            pos += 2
        elif op == 0x4A:  # BININT
            stack.append(unpack("<i", data, pos)[0])
            pos += 4
        elif op == 0x28:  # MARK
            marks.append(len(stack))
        elif op == 0x74:  # TUPLE
            at = marks.pop()
            items = tuple(stack[at:])
            del stack[at:]
            stack.append(items)
        elif op == 0x85:  # TUPLE1
            stack[-1] = (stack[-1],)
        elif op == 0x86:  # TUPLE2
            stack[-2:] = [tuple(stack[-2:])]
        elif op == 0x87:  # TUPLE3
            stack[-3:] = [tuple(stack[-3:])]
        elif op == 0x29:  # EMPTY_TUPLE
            stack.append(())
        elif op == 0x7D:  # EMPTY_DICT
            stack.append({})
        elif op == 0x5D:  # EMPTY_LIST
            stack.append([])
        elif op == 0x4E:  # NONE
            stack.append(None)
        elif op == 0x88:  # NEWTRUE
            stack.append(True)
        elif op == 0x89:  # NEWFALSE
            stack.append(False)
        elif op == 0x63:  # GLOBAL
            end1 = data.index(b"\n", pos)
            end2 = data.index(b"\n", end1 + 1)
            mod, name = data[pos:end1].decode("ascii"), data[end1 + 1 : end2].decode("ascii")
            pos = end2 + 1
            found = _allowed(mod, name)
            if found is None:
                raise NotStatic(f"global {mod}.{name}")
            stack.append(found)
        elif op == 0x93:  # STACK_GLOBAL
            mod, name = stack[-2:]
            del stack[-2:]
            found = _allowed(mod, name) if type(mod) is str and type(name) is str else None
            if found is None:
                raise NotStatic(f"global {mod}.{name}")
            stack.append(found)
        elif op == 0x51:  # BINPERSID
            stack[-1] = _storage(stack[-1], len(storages))
            storages.append(stack[-1])
        elif op == 0x52:  # REDUCE
            args = stack.pop()
            fn = stack[-1]
            if not isinstance(fn, _Global) or not isinstance(args, tuple):
                raise NotStatic("a call of something not allowed")
            if fn.name == "OrderedDict" and args == ():
                stack[-1] = OrderedDict()
            elif fn.name == "v2" and len(args) in (6, 7) and _no_extras(args[5], args[6:]):
                stack[-1] = _tensor(*args[:5])
            elif fn.name == "v3" and len(args) in (7, 8) and _no_extras(args[5], args[7:]) \
                    and isinstance(args[6], _Global) and args[6].name == "dtype":
                stack[-1] = _tensor(args[0], args[1], args[2], args[3], args[4], dtype=args[6].value)
            else:
                raise NotStatic(f"a call of {fn.name}")
        elif op == 0x75:  # SETITEMS
            at = marks.pop()
            d = stack[at - 1]
            if not isinstance(d, dict):
                raise NotStatic("items set on something not a dict")
            pairs = stack[at:]
            del stack[at:]
            for i in range(0, len(pairs) - 1, 2):
                d[_key(pairs[i])] = pairs[i + 1]
        elif op == 0x73:  # SETITEM
            v, k = stack.pop(), stack.pop()
            if not isinstance(stack[-1], dict):
                raise NotStatic("an item set on something not a dict")
            stack[-1][_key(k)] = v
        elif op == 0x65:  # APPENDS
            at = marks.pop()
            lst = stack[at - 1]
            if not isinstance(lst, list):
                raise NotStatic("items appended to something not a list")
            lst.extend(stack[at:])
            del stack[at:]
        elif op == 0x61:  # APPEND
            v = stack.pop()
            if not isinstance(stack[-1], list):
                raise NotStatic("an item appended to something not a list")
            stack[-1].append(v)
        elif op == 0x72:  # LONG_BINPUT
            memo[unpack("<I", data, pos)[0]] = stack[-1]
            pos += 4
        elif op == 0x6A:  # LONG_BINGET
            stack.append(memo[unpack("<I", data, pos)[0]])
            pos += 4
        elif op == 0x94:  # MEMOIZE
            memo[len(memo)] = stack[-1]
        elif op == 0x8A:  # LONG1
            k = data[pos]
            stack.append(int.from_bytes(data[pos + 1 : pos + 1 + k], "little", signed=True))
            pos += 1 + k
        elif op == 0x47:  # BINFLOAT
            stack.append(unpack(">d", data, pos)[0])
            pos += 8
        elif op == 0x8D:  # BINUNICODE8
            (k,) = unpack("<Q", data, pos)
            stack.append(data[pos + 8 : pos + 8 + k].decode("utf-8"))
            pos += 8 + k
        elif op == 0x43:  # SHORT_BINBYTES
            k = data[pos]
            stack.append(bytes(data[pos + 1 : pos + 1 + k]))
            pos += 1 + k
        elif op == 0x42:  # BINBYTES
            (k,) = unpack("<I", data, pos)
            stack.append(bytes(data[pos + 4 : pos + 4 + k]))
            pos += 4 + k
        elif op == 0x30:  # POP
            if marks and marks[-1] == len(stack):
                marks.pop()
            else:
                stack.pop()
        elif op == 0x31:  # POP_MARK
            del stack[marks.pop():]
        elif op == 0x32:  # DUP
            stack.append(stack[-1])
        elif op == 0x80:  # PROTO
            if data[pos] > 5:
                raise NotStatic("an unknown pickle protocol")
            pos += 1
        elif op == 0x95:  # FRAME
            pos += 8
        elif op == 0x2E:  # STOP
            if len(stack) != 1 or marks:
                raise NotStatic("a pickle that does not end with one object")
            if pos != n:
                raise NotStatic("bytes after the pickle's end")
            return stack[0], storages
        else:
            raise NotStatic(f"pickle opcode {op:#04x}")
    raise NotStatic("a pickle without its end")


def _storage(pid: Any, index: int) -> _Storage:
    if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], _Global)
            and pid[1].name == "storage" and type(pid[2]) is str and type(pid[4]) is int and pid[4] >= 0):
        raise NotStatic("an odd persistent id")
    dtype = pid[1].value
    return _Storage(index, pid[2], dtype, pid[4] * dtype.itemsize)


def _no_extras(hooks: Any, rest: tuple) -> bool:
    """backward hooks an empty OrderedDict, and no metadata (or an empty one)."""
    return isinstance(hooks, OrderedDict) and not hooks and all(m is None or m == {} for m in rest)


def _key(k: Any) -> Any:
    if isinstance(k, (str, int, float, bool, bytes, type(None))) or (isinstance(k, tuple) and all(
            isinstance(v, (str, int, float, bool, bytes, type(None))) for v in k)):
        return k
    raise NotStatic("a dict key that is not a plain value")


# ------------------------------------------------------------------------------------ the file


class _Layout:
    """What the last file read in full was read from, to know the next one laid out alike without
    parsing it: every byte of its first page and last 4 KiB the parse used (the end record, the
    central directory, the local headers read, data.pkl, the version, alignment and byte-order
    records), less the CRCs (which the parse does not read and which differ with the data) and
    the archive folder at the head of every name (torch names it after the file: data_12/...),
    which must be one folder name of the same length in both, of plain ASCII. A file whose every
    other such byte is the same, of the same size, is parsed into the same object: the parse is a
    function of those bytes. Taken only when the parse read nothing outside those two pages (the
    next file's are read anyway: the same preads, the same pages counted).

    Made when a file is parsed, worked out only when a file of its size comes next (files of
    varying lengths pay nothing for it)."""

    __slots__ = ("z", "size", "built", "pieces", "named", "plen")

    def __init__(self, z: _Zip, built: Any):
        z.pread = _no_read  # its pages are all it keeps: never a read on a descriptor since closed (or reused)
        self.z, self.size, self.built = z, z.size, built
        self.pieces: list | None = None  # worked out by _prepare
        self.named: list = []
        self.plen = 0

    def _prepare(self) -> bool:
        """Work out the bytes to compare; False when this file's layout cannot be known so."""
        z = self.z
        plen = len(z.prefix)
        names = [z.read(plen, at, use=False) for at in z.named] if not z.elsewhere else []
        if (z.elsewhere or z.size <= 2 * TAIL_BYTES or not names or not z.prefix.isascii()
                or any(name != z.prefix.encode() for name in names)):
            return False  # (every name in the archive folder: else a name's first bytes are not its folder)
        skip = sorted(z.unused + [(at, at + plen) for at in z.named])
        pieces = []
        for a, b in _union(z.used):
            for x, y in skip:  # the used range less the skipped ones inside it
                if y <= a or x >= b:
                    continue
                if x > a:
                    pieces.append((a, x))
                a = max(a, y)
            if a < b:
                pieces.append((a, b))
        out = []
        for a, b in pieces:
            in_tail = a >= z.tail_at
            if not in_tail and b > len(z.head):
                return False
            base = z.tail_at if in_tail else 0
            out.append((in_tail, a - base, b - base, (z.tail if in_tail else z.head)[a - base : b - base]))
        self.named = [(at >= z.tail_at, at - (z.tail_at if at >= z.tail_at else 0)) for at in z.named]
        self.pieces, self.plen = out, plen
        return True

    def matches(self, z: _Zip) -> bool:
        if z.size != self.size or len(z.head) != len(self.z.head):
            return False
        if self.pieces is None and not self._prepare():
            self.size = -1  # never again
            return False
        head, tail = z.head, z.tail
        for in_tail, a, b, expected in self.pieces or ():
            if (tail if in_tail else head)[a:b] != expected:
                return False
        in_tail, a = self.named[0]
        prefix = (tail if in_tail else head)[a : a + self.plen]
        if not (prefix.isascii() and prefix.endswith(b"/") and prefix.count(b"/") == 1):
            return False
        return all((tail if in_tail else head)[a : a + self.plen] == prefix for in_tail, a in self.named)


def _no_read(n: int, at: int) -> bytes:
    raise NotStatic("a file read before, not read again")


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


#: the layout of the last file read in full (_Layout), or None
_LAST_LAYOUT: list[_Layout | None] = [None]


def read_structure(pread: Callable[[int, int], bytes], size: int) -> Any:
    """What torch.load(file, map_location="meta", weights_only=True) returns for torch's zip of
    `size` bytes read with pread(n, offset), without unpickling; NotStatic when this reader does
    not take the file (the caller then calls torch.load). A file laid out as one read before
    (the same pickle, its storages at the same offsets) gets the very same object back: callers
    read it, never change it."""
    try:
        z = _Zip(pread, size)
        layout = _LAST_LAYOUT[0]
        if layout is not None and layout.matches(z):
            return layout.built
        z.parse()
        if z.has("constants.pkl") or not z.has("data.pkl"):
            raise NotStatic("a TorchScript archive or no data.pkl")
        for name in (".data/serialization_id", "version"):  # what torch's reader reads too
            if z.has(name):
                z.record(name, use=False)
        offsets = _Offsets(z)
        if z.has("byteorder") and z.record("byteorder") != b"little":
            raise NotStatic("a big-endian file")
        if z.records[z.prefix + "data.pkl"][1] > MAX_PICKLE_BYTES:
            raise NotStatic("a large pickle")
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
        placed = tuple([offsets.of(st.key, st.nbytes) for st in storages])
        # the files of a shard share their pickle and, same shapes, their storages' offsets: the
        # object built for the one before is this one's too (structure-only tensors, never written)
        key = (pickle, placed)
        built = _BUILT.get(key)
        if built is None:
            built = _build(obj, list(placed))
            if len(pickle) <= WALK_CACHE_BYTES:
                if len(_BUILT) >= 64:
                    _BUILT.clear()
                _BUILT[key] = built
        _LAST_LAYOUT[0] = _Layout(z, built)
        return built
    except NotStatic:
        raise
    except (struct.error, ValueError, IndexError, KeyError, UnicodeDecodeError, RuntimeError, TypeError,
            OverflowError) as err:
        raise NotStatic(f"{type(err).__name__}: {err}") from None
