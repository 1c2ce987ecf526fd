"""Crafted torch files by class, as a hostile user writes them, for the quick reader's differential
test (tests/hostile/test_quick_vs_torch.py) and its longer randomized run
(scripts/quick_vs_torch.py): every file starts from a real torch.save of a sample in a producer's
layout and changes what a class of attack changes, written back in torch's exact layout
(tests/helpers/torch_layout.py) unless the class is about the layout.

    for kind, name, data in crafted(seed):
        ...

`kind` is the class ("real", "protocol", "pickle", "zip", "mutation", "nan", ...). Files whose
reading by torch itself is not deterministic (a record flagged a DOS folder: torch reads memory it
never wrote) have kind "torch-nondeterministic": a comparison can only ask that the quick reader
hands them over.
"""

from __future__ import annotations

import io
import random
import struct
import zipfile
from collections.abc import Iterator

import torch

from tests.helpers import torch_layout

T, H, K = 300, 64, 3


def sample(seed: int, dtype=torch.bfloat16, pad: int = 0) -> dict:
    """A SpecForge sample (scripts/prepare_hidden_states.py: [1, T, kH] and [1, T, H])."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(20, 30000, (T,), generator=g)
    mask = torch.ones(T, dtype=torch.int64)
    if pad:
        ids[-pad:] = 0
        mask[-pad:] = 0
    aux = (torch.randn(T, K * H, generator=g) * torch.tensor([1.0] * H + [2.0] * H + [4.0] * H)).to(dtype)
    final = torch.randn(T, H, generator=g).to(dtype)
    return {"input_ids": ids, "loss_mask": mask, "aux_hidden_state": aux[None], "hidden_state": final[None]}


def layouts(seed: int) -> dict[str, object]:
    """Objects in the layouts producers write (SpecForge in three dtypes, ModelOpt, speculators'
    views of one tensor, a list, fp8 with its dtype in _rebuild_tensor_v3)."""
    s = sample(seed)
    aux, final = s["aux_hidden_state"][0], s["hidden_state"][0]
    stacked = torch.cat([aux, final], dim=-1)
    return {
        "specforge_bf16": s,
        "specforge_f32": sample(seed + 1, torch.float32, pad=40),
        "specforge_f16": sample(seed + 2, torch.float16),
        "modelopt": {"input_ids": s["input_ids"], "hidden_states": final, "aux_hidden_states": aux,
                     "conversation_id": 17},
        "speculators_views": {"input_ids": s["input_ids"], "loss_mask": s["loss_mask"],
                              "hidden_states": [stacked[:, i * H:(i + 1) * H] for i in range(K + 1)]},
        "list": [aux[:, i * H:(i + 1) * H].clone() for i in range(K)],
        "fp8": {"input_ids": s["input_ids"], "aux_hidden_state": aux.float().to(torch.float8_e4m3fn),
                "hidden_state": final.float().to(torch.float8_e4m3fn)},
    }


def saved(obj, **kw) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    return buf.getvalue()


def crafted(seed: int) -> Iterator[tuple[str, str, bytes]]:
    """(kind, name, bytes) of every crafted file of this seed."""
    rng = random.Random(seed)
    objs = layouts(seed)
    real = {name: saved(obj) for name, obj in objs.items()}
    for name, data in real.items():
        yield "real", name, data
    base = real["specforge_bf16"]
    folder, items = torch_layout.records(base)
    yield from _protocols(objs["specforge_bf16"])
    yield from _pickles(folder, items)
    yield from _zips(folder, items, base, objs["specforge_bf16"])
    yield from _nonfinite(seed)
    for i in range(12):
        name, data = rng.choice(sorted(real.items()))
        yield "mutation", f"{name}_flip{i}", _flipped(data, rng)


# ------------------------------------------------------------------------------ the pickle


def _protocols(obj) -> Iterator[tuple[str, str, bytes]]:
    for protocol in (3, 4, 5):
        yield "protocol", f"protocol{protocol}", saved(obj, pickle_protocol=protocol)


class P:
    """A protocol 2 pickle written opcode by opcode (what torch.save's pickler emits)."""

    def __init__(self) -> None:
        self.b = bytearray(b"\x80\x02")

    def op(self, raw: bytes) -> P:
        self.b += raw
        return self

    def s(self, text: str) -> P:
        raw = text.encode("utf-8", "surrogatepass")
        return self.op(b"X" + struct.pack("<I", len(raw)) + raw)

    def i(self, n: int) -> P:
        return self.op(b"K" + bytes([n]) if 0 <= n < 256 else b"J" + struct.pack("<i", n))

    def g(self, module: str, name: str) -> P:
        return self.op(b"c" + module.encode() + b"\n" + name.encode() + b"\n")

    def ints(self, xs) -> P:
        self.op(b"(")
        for x in xs:
            self.i(x)
        return self.op(b"t")

    def tensor(self, key: str, storage: str, numel: int, size, stride, offset: int = 0, grad: bytes = b"\x89",
               hooks: bytes = b"", location: str = "cpu") -> P:
        self.g("torch._utils", "_rebuild_tensor_v2").op(b"((").s("storage").g("torch", storage).s(key).s(location)
        self.i(numel).op(b"tQ")
        self.i(offset).ints(size).ints(stride).op(grad)
        self.g("collections", "OrderedDict").op(b")R" + hooks)
        return self.op(b"tR")

    def stop(self) -> bytes:
        return bytes(self.b + b".")


def _sample_pickle(extra: bytes = b"", *, aux_numel: int = T * K * H, aux_key: str = "2",
                   aux_storage: str = "BFloat16Storage", aux_stride=(K * H, 1), items_close: bytes = b"u") -> bytes:
    """The SpecForge sample's pickle written by hand (records data/0..3 of the base file), with
    `extra` opcodes before the SETITEMS that closes the dict."""
    p = P().op(b"}q\x00(")
    p.s("input_ids").tensor("0", "LongStorage", T, (T,), (1,))
    p.s("loss_mask").tensor("1", "LongStorage", T, (T,), (1,))
    p.s("aux_hidden_state").tensor(aux_key, aux_storage, aux_numel, (1, T, K * H), (T * K * H, *aux_stride))
    p.s("hidden_state").tensor("3", "BFloat16Storage", T * H, (1, T, H), (T * H, H, 1))
    return p.op(extra + items_close).stop()


def tuple_bomb(levels: int) -> bytes:
    """A tuple built from itself `levels` times through the memo (2^levels nodes as a tree), its
    steps gathered in one tuple (torch's unpickler has no POP): ~9 bytes a level."""
    return b"(Nq\x01" + b"h\x01h\x01\x86q\x01" * levels + b"t"


def _pickles(folder: str, items: list) -> Iterator[tuple[str, str, bytes]]:
    def with_pickle(pkl: bytes) -> bytes:
        return torch_layout.write(folder, [("data.pkl", pkl) if n == "data.pkl" else (n, d) for n, d in items])

    same = _sample_pickle()
    yield "pickle", "handwritten", with_pickle(same)
    body = same[2:]
    cases = {
        "memoize": same[:3] + b"\x94" + same[3:],
        "frame": same[:2] + b"\x95" + struct.pack("<Q", len(body)) + body,
        "dup_pop": same[:3] + b"20" + same[3:],
        "pop_mark": same[:3] + b"(1" + same[3:],
        "odd_setitems": _sample_pickle(P().s("orphan").b[2:]),
        "trailing": same + b"N",
        "two_left": same[:-1] + b"N.",
        "tuple2_of_one": _sample_pickle(P().s("k").op(b"(N\x86").b[2:]),
        "setitems_at_bottom": b"\x80\x02(X\x01\x00\x00\x00aN}u.",
        "appends_at_bottom": b"\x80\x02(N]e.",
        "tuple_bomb": _sample_pickle(P().s("bomb").b[2:] + tuple_bomb(20)),
        "list_cycle": _sample_pickle(P().s("loop").op(b"]q\x05h\x05a").b[2:]),
        "deep": _sample_pickle(P().s("deep").op(b"]" * 100 + b"a" * 99).b[2:]),
        "float_alias": same.replace(b"torch\nBFloat16Storage\n", b"torch\nfloat\n", 1),
        "torch_storage": same.replace(b"torch\nBFloat16Storage\n", b"torch\nStorage\n", 1),
        "typed_storage": same.replace(b"torch\nBFloat16Storage\n", b"torch.storage\nTypedStorage\n", 1),
        "untyped_storage": _sample_pickle(aux_storage="storage\nUntypedStorage", aux_numel=T * K * H * 2),
        "cuda_storage": same.replace(b"ctorch\nLongStorage\n", b"ctorch.cuda\nLongStorage\n"),
        "qint_storage": same.replace(b"torch\nLongStorage\n", b"torch\nQInt8Storage\n", 1),
        "system": same.replace(b"torch._utils\n_rebuild_tensor_v2\n", b"posix\nsystem\n", 1),
        "short_binunicode": same.replace(b"X\x09\x00\x00\x00input_ids", b"\x8c\x09input_ids", 1),
        "surrogate_key": _sample_pickle(P().s("\ud800").op(b"N").b[2:]),
        "empty_set": _sample_pickle(P().s("set").op(b"\x8f").b[2:]),
        "short_binstring": _sample_pickle(P().s("old").op(b"U\x03abc").b[2:]),
        "dup_key_other_numel": _sample_pickle(aux_key="3"),
        "numel_past_record": _sample_pickle(aux_numel=T * K * H + 2),
        "numel_short_of_record": _sample_pickle(aux_numel=T * K * H - 64),
        "stride_past_storage": _sample_pickle(aux_stride=(K * H + 1, 1)),
        "negative_stride": _sample_pickle(aux_stride=(K * H, -1)),
        "grad_on_ints": same.replace(b"\x89c", b"\x88c", 1),
        "grad_as_int": same.replace(b"\x89c", b"K\x01c", 1),
        "hooks": same.replace(b")R", b")R(K\x01Nu", 1),
        "location_int": same.replace(b"X\x03\x00\x00\x00cpu", b"K\x07", 1),
        # saved on a GPU: read onto the CPU as the tool's full load reads it (map_location="cpu")
        "location_cuda": same.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"),
        "key_int": same.replace(b"X\x01\x00\x00\x000", b"K\x00", 1),
        "pid_int": _sample_pickle(P().s("pid").op(b"K\x05Q").b[2:]),
        "protocol_3_header": b"\x80\x03" + body,
        "binget_missing": same[:3] + b"h\x63" + same[3:],
        "unknown_opcode": same[:3] + b"\xff" + same[3:],
        "nonascii_global": same.replace(b"collections\nOrderedDict", "collections\nOrderedDicté".encode(), 1),
        "long1": _sample_pickle(P().s("big").op(b"\x8a\x09" + (1 << 70).to_bytes(9, "little")).b[2:]),
        "float": _sample_pickle(P().s("f").op(b"G" + struct.pack(">d", float("nan"))).b[2:]),
        "truncated": same[:-20],
    }
    for name, pkl in cases.items():
        yield "pickle", name, with_pickle(pkl)


# ------------------------------------------------------------------------------ the zip


def _zips(folder: str, items: list, base: bytes, obj: dict) -> Iterator[tuple[str, str, bytes]]:
    named = dict(items)

    def rewrite(replace: dict | None = None, drop: tuple = (), insert: tuple = (), **kw) -> bytes:
        out = []
        for n, d in items:
            if n in drop:
                continue
            out.append((n, (replace or {}).get(n, d)))
            for after, new in insert:
                if after == n:
                    out.append(new)
        return torch_layout.write(folder, out, **kw)

    yield "zip", "rewritten", rewrite()
    for v in (b"99\n", b"0\n", b"1\n", b"2\n", b" 3\n", b"3", b"3x\n", b"4\n", b"10\n", b"11\n"):
        yield "zip", f"version_{v!r}", rewrite({"version": v})
    yield "zip", "version_missing", rewrite(drop=("version",))
    yield "zip", "data_version_too", rewrite(insert=(("version", (".data/version", b"99\n")),))
    for a in (b"0", b"abc", b"63", b"128", b" 64"):
        yield "zip", f"alignment_{a!r}", rewrite({".storage_alignment": a})
    yield "zip", "alignment_128_written", rewrite({".storage_alignment": b"128"}, align=128)
    yield "zip", "alignment_4096_written", rewrite({".storage_alignment": b"4096"}, align=4096)
    for b in (b"big", b"BIG", b"middle"):
        yield "zip", f"byteorder_{b!r}", rewrite({"byteorder": b})
    yield "zip", "big_endian_genuine", _big_endian(folder, items, obj)
    yield "zip", "serialization_id_binary", rewrite({".data/serialization_id": b"\xff\xfe" * 20})
    yield "zip", "format_version_0", rewrite({".format_version": b"0"})
    yield "zip", "unreferenced_between", rewrite(insert=(("data/1", ("data/7", b"\x00" * 256)),))
    yield "zip", "foreign_record", rewrite(insert=(("data/1", ("extra.txt", b"hello")),))
    yield "zip", "no_byteorder", rewrite(drop=("byteorder",))
    yield "zip", "no_serialization_id", rewrite(drop=(".data/serialization_id",))
    yield "zip", "duplicate_storage", torch_layout.write(folder, items + [("data/0", named["data/2"][: len(named["data/0"])])])
    yield "zip", "upper_case_name", torch_layout.write(folder, items, name_bytes={"data/3": f"{folder}/DATA/3".encode()})
    yield "zip", "upper_case_twin", torch_layout.write(
        folder, items + [("DATA/3", bytes(len(named["data/3"])))])
    yield "zip", "nonutf8_name", torch_layout.write(
        folder, items + [("data/8", b"\x00" * 64)], name_bytes={"data/8": f"{folder}/data/\xff".encode("latin-1")})
    yield "zip", "flags_utf8_off", torch_layout.write(folder, items, flags=0x0008)
    yield "zip", "flags_no_descriptor", torch_layout.write(folder, items, flags=0x0800)
    yield "zip", "stored_repack", _repack(base, zipfile.ZIP_STORED)
    yield "zip", "deflated_repack", _repack(base, zipfile.ZIP_DEFLATED)
    yield "zip", "deflated_pickle_bomb", _pickle_bomb(base)
    yield "zip", "comment", _with_comment(base)
    yield "zip", "junk_after", base + b"\x00" * 100
    yield "zip", "truncated", base[: len(base) - 200]
    yield "zip", "empty_pickle", rewrite({"data.pkl": b""})
    yield "zip", "decoy_extra", _decoy(base, folder, items, longer_extra=True)
    yield "zip", "decoy_name", _decoy(base, folder, items, longer_extra=False)
    yield "zip", "zip64_sizes", _central_field(base, "data/3", 20, struct.pack("<II", 0xFFFFFFFF, 0xFFFFFFFF),
                                               zip64=10**12)
    yield "torch-nondeterministic", "folder_attribute", _central_field(base, "data/2", 38, struct.pack("<I", 0x10))
    yield "zip", "crc_changed", _central_field(base, "data/2", 16, b"\x00\x00\x00\x00")
    yield "zip", "time_changed", _central_field(base, "data/2", 12, b"\x21\x43\x65\x07")
    yield "zip", "encrypted", _central_field(base, "data/2", 8, struct.pack("<H", 0x0809))
    yield "zip", "method_deflate_claimed", _central_field(base, "data/2", 10, struct.pack("<H", 8))
    yield "zip", "disk_number", _central_field(base, "data/2", 34, struct.pack("<H", 1))
    yield "zip", "not_zip64_locator", base[:-42] + b"\x00" * 20 + base[-22:]


def _big_endian(folder: str, items: list, obj: dict) -> bytes:
    """The sample as a big-endian machine's torch.save writes it: every storage byte-swapped."""
    swapped = []
    order = ["input_ids", "loss_mask", "aux_hidden_state", "hidden_state"]
    for n, d in items:
        if n.startswith("data/"):
            t = obj[order[int(n[5:])]]
            swapped.append((n, bytes(t.contiguous().view(torch.uint8).view(-1, t.element_size()).flip(1).flatten().numpy())))
        else:
            swapped.append((n, b"big" if n == "byteorder" else d))
    return torch_layout.write(folder, swapped)


def _repack(data: bytes, method: int) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as z:
        for n in src.namelist():
            z.writestr(n, src.read(n))
    return out.getvalue()


def _pickle_bomb(data: bytes) -> bytes:
    """data.pkl deflated, followed by 65 MiB of zeros torch never reads (it stops at STOP): a
    file of ~100 KB whose pickle torch expands to 65 MiB before reading it."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n in src.namelist():
            body = src.read(n)
            if n.endswith("/data.pkl"):
                z.writestr(n, body + bytes(65 << 20), compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
            else:
                z.writestr(n, body)
    return out.getvalue()


def _with_comment(data: bytes) -> bytes:
    return data[:-2] + struct.pack("<H", 7) + b"comment"


def _entry(data: bytes, inner: str) -> int:
    end = data.rindex(b"PK\x05\x06")
    entries, _, pos = struct.unpack_from("<HII", data, end + 10)
    for _ in range(entries):
        nl, el, cl = struct.unpack_from("<3H", data, pos + 28)
        if data[pos + 46 : pos + 46 + nl].decode("latin-1").endswith("/" + inner):
            return pos
        pos += 46 + nl + el + cl
    raise KeyError(inner)


def _central_field(data: bytes, inner: str, at: int, value: bytes, zip64: int | None = None) -> bytes:
    pos = _entry(data, inner) + at
    out = data[:pos] + value + data[pos + len(value) :]
    if zip64 is None:
        return out
    # a zip64 extra with the sizes, the central directory one entry longer: everything after moves
    entry = _entry(out, inner)
    nl = struct.unpack_from("<H", out, entry + 28)[0]
    extra = struct.pack("<HHQQ", 1, 16, zip64, zip64)
    out = out[: entry + 30] + struct.pack("<H", len(extra)) + out[entry + 32 : entry + 46 + nl] + extra + out[entry + 46 + nl :]
    end = out.rindex(b"PK\x05\x06")
    cd_size = struct.unpack_from("<I", out, end + 12)[0] + len(extra)
    out = out[: end + 12] + struct.pack("<I", cd_size) + out[end + 16 :]
    e64 = out.rindex(b"PK\x06\x06")
    out = out[: e64 + 40] + struct.pack("<Q", cd_size) + out[e64 + 48 :]
    loc = out.rindex(b"PK\x06\x07")
    return out[: loc + 8] + struct.pack("<Q", e64) + out[loc + 16 :]


def _decoy(data: bytes, folder: str, items: list, *, longer_extra: bool) -> bytes:
    """aux_hidden_state's real data NaN, placed after a local extra field 64 bytes longer (or a
    local name 64 bytes longer) than torch's writer makes it, with the first bytes of a clean copy
    (the decoy) where a reader that computes offsets from the central directory would look."""
    named = dict(items)
    clean = named["data/2"]
    nan = torch.full((len(clean) // 2,), float("nan"), dtype=torch.bfloat16).view(torch.uint8).numpy().tobytes()
    moved = [(n, nan if n == "data/2" else d) for n, d in items]
    where = {"extra_tail": {"data/2": clean[:64]}} if longer_extra else {"local_name_tail": {"data/2": clean[:64]}}
    return torch_layout.write(folder, moved, **where)


# ------------------------------------------------------------------------------ the data


def _nonfinite(seed: int) -> Iterator[tuple[str, str, bytes]]:
    s = sample(seed)
    aux = s["aux_hidden_state"].clone()
    aux[0, :, H : 2 * H] = float("nan")
    yield "nan", "nan_slot", saved({**s, "aux_hidden_state": aux})
    final = s["hidden_state"].clone()
    final[0, ::7] = float("inf")
    yield "nan", "inf_rows", saved({**s, "hidden_state": final})


def _flipped(data: bytes, rng: random.Random) -> bytes:
    """One to three bytes changed where they decide the parse: a local header, the central
    directory, the end records, or data.pkl."""
    out = bytearray(data)
    end = data.rindex(b"PK\x05\x06")
    cd_offset = struct.unpack_from("<I", data, end + 16)[0]
    regions = [(cd_offset, len(data)), (0, 512)]
    headers = [i for i in range(len(data)) if data.startswith(b"PK\x03\x04", i)][:12]
    regions += [(h, h + 64) for h in headers]
    for _ in range(rng.randint(1, 3)):
        a, b = rng.choice(regions)
        i = rng.randrange(a, min(b, len(data)))
        out[i] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, out[i] ^ (1 << rng.randrange(8))])
    return bytes(out)
