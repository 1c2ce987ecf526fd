"""data.pkl of torch's zip walked without executing anything, for the quick scan's own reader
(engines/read/torch_zip.py): a strict subset of what torch's weights-only unpickler reads, read the
same way.

Its loop mirrors torch/_weights_only_unpickler.py `Unpickler.load` (torch 2.13.0): the same stack
and metastack, the same index arithmetic (TUPLE2 on a stack of one fails here as there), the
globals looked up in torch's own allowlist (`_get_allowed_globals`, so `torch.float` or
`torch.Storage`, which it refuses, are refused here too), the persistent ids as
torch/serialization.py `persistent_load` takes them. It takes less than torch does, and raises
NotStatic for the rest, which the caller hands to torch.load:

- only protocol 2 (what torch.save writes) and its opcodes that torch reads; no FRAME, MEMOIZE,
  DUP, POP, SHORT_BINUNICODE, STACK_GLOBAL, BINBYTES (torch refuses them) nor SHORT_BINSTRING,
  EMPTY_SET (torch reads them, samples never hold them);
- only these globals: the tensor rebuilds v2 and v3 (without hooks or metadata), storage types of
  the dtypes hidden states come in, those dtypes, and OrderedDict called with no arguments;
- a list or dict is referenced once (a BINGET of one is handed over), and the object the pickle
  describes has at most MAX_NODES nodes counted with sharing expanded (a tuple built from itself 40
  times through the memo is 2^40 nodes: handed over, not copied), at most MAX_DEPTH deep;
- a storage key named twice names the same dtype and size both times (torch keeps the first);
  dict keys are plain values; SETITEMS has pairs; the pickle ends at its STOP with one object.

Standard library only; torch is imported to look up the allowlist (the caller has it loaded).
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from typing import Any

from eagle3_tui.engines.read.zip_archive import NotStatic

#: the nodes (containers, tensors, values) the walked object may hold, shared ones counted each
#: time they are reached: a sample's pickle has a few dozen
MAX_NODES = 100_000
#: how deep its containers may nest (a sample's: 3 or 4)
MAX_DEPTH = 64
_PROTOCOL = 2


class Global:
    """A global of data.pkl on this reader's list: kind "dtype", "storage" (value: its dtype),
    "v2", "v3" or "OrderedDict"."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value: Any = None):
        self.kind, self.value = kind, value


class Storage:
    """A persistent id of data.pkl: storage `key` of `nbytes` bytes of `dtype`, the index-th named."""

    __slots__ = ("index", "key", "dtype", "nbytes")

    def __init__(self, index: int, key: str, dtype, nbytes: int):
        self.index, self.key, self.dtype, self.nbytes = index, key, dtype, nbytes


class Tensor:
    """A tensor of data.pkl, built (on "meta") once its storage's place in the file is known."""

    __slots__ = ("storage", "offset", "size", "stride", "requires_grad", "dtype")

    def __init__(self, storage: Storage, offset: int, size: tuple, stride: tuple, requires_grad: bool, dtype):
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride
        self.requires_grad, self.dtype = requires_grad, dtype


_GLOBALS: dict[str, Global | None] = {}
_PLAIN = (str, int, float, bool, type(None))


def _global(module: str, name: str) -> Global | None:
    """What GLOBAL module.name stands for, when torch's allowlist has it and this reader takes it."""
    full = f"{module}.{name}"
    if full in _GLOBALS:
        return _GLOBALS[full]
    # lazy: torch: loaded when used, never at start-up
    import torch
    from torch._weights_only_unpickler import _get_allowed_globals

    obj = _get_allowed_globals().get(full)
    found = None
    if obj is torch._utils._rebuild_tensor_v2:
        found = Global("v2")
    elif obj is torch._utils._rebuild_tensor_v3:
        found = Global("v3")
    elif obj is OrderedDict:
        found = Global("OrderedDict")
    elif isinstance(obj, torch.dtype) and obj in _dtypes():
        found = Global("dtype", obj)
    elif obj is torch.UntypedStorage:
        found = Global("storage", torch.uint8)
    elif isinstance(obj, torch.serialization.StorageType) and obj.dtype in _dtypes():
        found = Global("storage", obj.dtype)  # what torch's allowlist has for torch.<X>Storage
    if len(_GLOBALS) < 1024:
        _GLOBALS[full] = found
    return found


def _dtypes() -> frozenset:
    """The dtypes hidden states, ids and masks come in (no quantized, complex or bit types)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    names = ("float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "int64", "int32",
             "int16", "int8", "uint8", "bool")
    return frozenset(getattr(torch, n) for n in names)


#: opcodes that push one value: a constant, a new container, a fixed-width number (struct format)
_CONSTANTS = {0x29: (), 0x4E: None, 0x88: True, 0x89: False}  # EMPTY_TUPLE NONE NEWTRUE NEWFALSE
_FRESH = {0x7D: dict, 0x5D: list}  # EMPTY_DICT EMPTY_LIST
_NUMBERS = {0x4B: struct.Struct("<B"), 0x4D: struct.Struct("<H"), 0x4A: struct.Struct("<i"),  # BININT1/2, BININT
            0x47: struct.Struct(">d")}  # BINFLOAT
#: the memo's opcodes: (index width, put or get)
_MEMO = {0x71: (struct.Struct("<B"), True), 0x72: (struct.Struct("<I"), True),  # BINPUT LONG_BINPUT
         0x68: (struct.Struct("<B"), False), 0x6A: (struct.Struct("<I"), False)}  # BINGET LONG_BINGET
#: opcodes that close a MARK: TUPLE SETITEMS APPENDS
_CLOSING = frozenset((0x74, 0x75, 0x65))


def walk(data: bytes) -> tuple[Any, list[Storage]]:
    """The object data.pkl describes (its tensors as Tensor) and the storages it names, in order."""
    if data[:2] != bytes((0x80, _PROTOCOL)):
        raise NotStatic("not a protocol 2 pickle (torch.save's)")
    storages: list[Storage] = []
    keys: dict[str, Storage] = {}
    stack: list = []
    metastack: list[list] = []
    memo: dict[int, Any] = {}
    n, pos = len(data), 2
    while pos < n:
        op = data[pos]
        pos += 1
        if op in _MEMO:
            width, put = _MEMO[op]
            (i,) = width.unpack_from(data, pos)
            pos += width.size
            if put:
                memo[i] = stack[-1]
            else:
                stack.append(_shared(memo[i]))
        elif op in _CONSTANTS:
            stack.append(_CONSTANTS[op])
        elif op in _FRESH:
            stack.append(_FRESH[op]())
        elif op in _NUMBERS:
            stack.append(_NUMBERS[op].unpack_from(data, pos)[0])
            pos += _NUMBERS[op].size
        elif op == 0x58 or op == 0x8A:  # BINUNICODE, LONG1
            value, pos = _text_or_long(data, pos, op)
            stack.append(value)
        elif op == 0x28:  # MARK
            metastack.append(stack)
            stack = []
        elif op in _CLOSING:
            items, stack = stack, metastack.pop()
            _close(op, items, stack)
        elif 0x85 <= op <= 0x87:  # TUPLE1, TUPLE2, TUPLE3: torch's indexing (one item short fails)
            k = op - 0x84
            stack[-k:] = [tuple(stack[i] for i in range(-k, 0))]
        elif op == 0x63:  # GLOBAL
            found, pos = _global_at(data, pos)
            stack.append(found)
        elif op == 0x51:  # BINPERSID
            stack[-1] = _storage(stack[-1], storages, keys)
        elif op == 0x52:  # REDUCE
            args = stack.pop()
            stack[-1] = _reduce(stack[-1], args)
        elif op == 0x73:  # SETITEM
            v, k = stack.pop(), stack.pop()
            _dict(stack[-1])[_key(k)] = v
        elif op == 0x61:  # APPEND
            v = stack.pop()
            _list(stack[-1]).append(v)
        elif op == 0x2E:  # STOP
            if len(stack) != 1 or metastack or pos != n:
                raise NotStatic("a pickle that does not end with one object at its end")
            _count(stack[0])
            return stack[0], storages
        else:
            raise NotStatic(f"pickle opcode {op:#04x}")
    raise NotStatic("a pickle without its end")


def _text_or_long(data: bytes, pos: int, op: int) -> tuple[Any, int]:
    """BINUNICODE's string (strict UTF-8: torch's surrogatepass is handed over) or LONG1's integer
    at pos, and the position after it."""
    if op == 0x58:
        (k,) = struct.unpack_from("<I", data, pos)
        pos += 4
    else:
        k = data[pos]
        pos += 1
    if pos + k > len(data):
        raise NotStatic("a value past the pickle's end")
    raw = data[pos : pos + k]
    return (raw.decode("utf-8") if op == 0x58 else int.from_bytes(raw, "little", signed=True)), pos + k


def _close(op: int, items: list, stack: list) -> None:
    """TUPLE, SETITEMS or APPENDS of the items since the MARK, on what lies under it."""
    if op == 0x74:
        stack.append(tuple(items))
    elif op == 0x75:
        target = _dict(stack[-1])
        if len(items) % 2:
            raise NotStatic("SETITEMS with a key and no value")  # torch: IndexError
        for i in range(0, len(items), 2):
            target[_key(items[i])] = items[i + 1]
    else:
        _list(stack[-1]).extend(items)


def _global_at(data: bytes, pos: int) -> tuple[Global, int]:
    """GLOBAL's two lines at pos, as this reader takes it, and the position after them."""
    end1 = data.index(b"\n", pos)
    end2 = data.index(b"\n", end1 + 1)
    module, name = data[pos:end1], data[end1 + 1 : end2]
    found = _global(module.decode("ascii"), name.decode("ascii")) if (module + name).isascii() else None
    if found is None:
        raise NotStatic(f"global {_text(module)}.{_text(name)}")
    return found, end2 + 1


def _text(raw: bytes) -> str:
    return raw[:60].decode("ascii", "backslashreplace")


def _shared(obj: Any) -> Any:
    """A memo entry read again: a list or dict may not be (it could grow into itself)."""
    if isinstance(obj, (list, dict)):
        raise NotStatic("a list or dict referenced twice")
    return obj


def _dict(obj: Any) -> dict:
    if type(obj) is not dict and type(obj) is not OrderedDict:
        raise NotStatic("items set on something not a dict")
    return obj


def _list(obj: Any) -> list:
    if type(obj) is not list:
        raise NotStatic("items appended to something not a list")
    return obj


def _key(k: Any) -> Any:
    if type(k) in _PLAIN or (type(k) is tuple and all(type(v) in _PLAIN for v in k)):
        return k
    raise NotStatic("a dict key that is not a plain value")


def _storage(pid: Any, storages: list[Storage], keys: dict[str, Storage]) -> Storage:
    """torch/serialization.py persistent_load's storage, of a (storage, type, key, location, numel)."""
    if not (type(pid) is tuple and len(pid) == 5 and type(pid[0]) is str and pid[0] == "storage"
            and isinstance(pid[1], Global) and pid[1].kind == "storage" and type(pid[2]) is str
            and type(pid[3]) is str and type(pid[4]) is int and pid[4] >= 0):
        raise NotStatic("a persistent id torch.save does not write")
    dtype, key = pid[1].value, pid[2]
    nbytes = pid[4] * dtype.itemsize
    seen = keys.get(key)
    if seen is not None:
        if (seen.dtype, seen.nbytes) != (dtype, nbytes):
            raise NotStatic("a storage named twice with other sizes")  # torch keeps the first
        return seen
    keys[key] = Storage(len(storages), key, dtype, nbytes)
    storages.append(keys[key])
    return keys[key]


def _reduce(fn: Any, args: Any) -> Any:
    if not isinstance(fn, Global) or type(args) is not tuple:
        raise NotStatic("a call of something not allowed")
    if fn.kind == "OrderedDict" and args == ():
        return OrderedDict()
    if fn.kind == "v2" and len(args) in (6, 7) and _no_extras(args[5], args[6:]):
        return _tensor(*args[:5])
    if (fn.kind == "v3" and len(args) in (7, 8) and _no_extras(args[5], args[7:]) and isinstance(args[6], Global)
            and args[6].kind == "dtype"):
        return _tensor(args[0], args[1], args[2], args[3], args[4], dtype=args[6].value)
    raise NotStatic(f"a call of {fn.kind}")


def _tensor(storage: Any, offset: Any, size: Any, stride: Any, requires_grad: Any, dtype=None) -> Tensor:
    if not (type(offset) is int and _ints(size) and _ints(stride) and len(size) == len(stride)
            and type(requires_grad) is bool):
        raise NotStatic("odd tensor arguments")
    if not isinstance(storage, Storage):
        raise NotStatic("a tensor without a storage")
    return Tensor(storage, offset, size, stride, requires_grad, storage.dtype if dtype is None else dtype)


def _ints(x: Any) -> bool:
    return type(x) is tuple and all(type(v) is int for v in x)


def _no_extras(hooks: Any, rest: tuple) -> bool:
    """backward hooks an empty OrderedDict, and no metadata (or an empty one)."""
    return type(hooks) is OrderedDict and not hooks and all(m is None or m == {} for m in rest)


def _count(obj: Any) -> None:
    """NotStatic when obj, its sharing expanded, has more than MAX_NODES nodes or nests deeper
    than MAX_DEPTH (the walk stops at the first node past either)."""
    todo = [(obj, 0)]
    nodes = 0
    while todo:
        x, depth = todo.pop()
        nodes += 1
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            raise NotStatic("a pickle that describes too many objects (shared ones counted each time)")
        if type(x) is tuple or type(x) is list:
            todo.extend((v, depth + 1) for v in x)
        elif type(x) is dict or type(x) is OrderedDict:
            todo.extend((v, depth + 1) for v in x.values())
