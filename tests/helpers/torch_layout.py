"""torch.save's zip written record by record, as torch's writer (caffe2/serialize/inline_container.cc
over miniz 3, torch 2.13.0) lays it out: a local header (flags 0x0808, no sizes), the name, an "FB"
extra padding the data to 64 bytes, the data, a data descriptor; then the central directory, the
zip64 end record, its locator and the end record. `records(path)` and `write(records)` round-trip
a torch.save file byte for byte (tests/hostile/test_quick_vs_torch.py checks it), so a crafted
file differs from a real one only where the test changes it."""

from __future__ import annotations

import struct
import zlib

ALIGN = 64


def records(data: bytes) -> tuple[str, list[tuple[str, bytes]]]:
    """(archive folder, [(name inside it, bytes)]) of a torch.save file, in the file's order."""
    end = data.rindex(b"PK\x05\x06")
    entries, _, cd_offset = struct.unpack_from("<HII", data, end + 10)
    out, pos, folder = [], cd_offset, ""
    for _ in range(entries):
        f = struct.unpack_from("<4s6H3I5HII", data, pos)
        name = data[pos + 46 : pos + 46 + f[10]].decode()
        header, size = f[16], f[9]
        nl, el = struct.unpack_from("<HH", data, header + 26)
        start = header + 30 + nl + el
        folder = folder or name.split("/", 1)[0]
        out.append((name.split("/", 1)[1], data[start : start + size]))
        pos += 46 + f[10] + f[11] + f[12]
    return folder, out


def write(folder: str, items: list[tuple[str, bytes]], *, align: int = ALIGN, flags: int = 0x0808,
          name_bytes: dict[str, bytes] | None = None, local_name_tail: dict[str, bytes] | None = None,
          extra_tail: dict[str, bytes] | None = None) -> bytes:
    """The archive of `items` ((name inside the folder, bytes)) as torch's writer writes it.
    name_bytes: a record's full name as other bytes (a crafted name); local_name_tail: bytes after
    a record's name in its local header only; extra_tail: bytes after its padding, inside the "FB"
    extra (whose length counts them): either moves the data past where torch's writer puts it."""
    out = bytearray()
    central = bytearray()
    for inner, payload in items:
        name = (name_bytes or {}).get(inner, f"{folder}/{inner}".encode())
        local_name = name + (local_name_tail or {}).get(inner, b"")
        tail = (extra_tail or {}).get(inner, b"")
        header = len(out)
        start = header + 30 + len(name) + 4
        pad = -start % align
        crc = zlib.crc32(payload)
        out += struct.pack("<4s5H3I2H", b"PK\x03\x04", 0, flags, 0, 0, 0, 0, 0, 0, len(local_name), 4 + pad + len(tail))
        out += local_name + b"FB" + struct.pack("<H", pad + len(tail)) + b"Z" * pad + tail + payload
        out += struct.pack("<4s3I", b"PK\x07\x08", crc, len(payload), len(payload))
        central += struct.pack("<4s6H3I5HII", b"PK\x01\x02", 0, 0, flags, 0, 0, 0, crc, len(payload), len(payload),
                               len(name), 0, 0, 0, 0, 0, header) + name
    cd_offset = len(out)
    out += central
    eocd64 = len(out)
    n = len(items)
    out += struct.pack("<4sQ2H2I4Q", b"PK\x06\x06", 44, 798, 45, 0, 0, n, n, len(central), cd_offset)
    out += struct.pack("<4sIQI", b"PK\x06\x07", 0, eocd64, 1)
    out += struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, n, n, len(central), cd_offset, 0)
    return bytes(out)
