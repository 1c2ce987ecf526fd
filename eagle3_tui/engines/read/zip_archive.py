"""torch.save's zip, read only when it is laid out exactly as torch's writer lays it out, for the
quick scan's own reader (engines/read/torch_zip.py).

What torch's reader (PyTorchStreamReader over miniz, torch 2.13.0) reads of a record: the central
directory entry found by a case-insensitive name lookup (miniz `mz_zip_reader_locate_file`, flags
0), then its local header, whose name and extra lengths place the data (`getRecordOffset`,
`mz_zip_reader_extract_to_mem`). The entry's flags, method, disk and external attributes decide
whether the record is read at all (an entry with the DOS folder bit set reads as garbage), the CRC,
times, versions and internal attributes are not checked (torch builds miniz without CRC checks:
measured on every field of every record, tests/hostile/test_zip_fields.py). So this reader takes
a file only when:

- the end record closes the file (no comment), with the zip64 end record and its locator torch
  writes in front of it, both saying the same;
- the central directory runs from its offset to the zip64 end record, every entry with the flags,
  method, disk, attributes, extra and comment torch writes, an ASCII name in the archive's folder
  (the first entry's), no two names equal but for case;
- every record's local header is where the record before it ends (header, name, padding, data, the
  16-byte descriptor), names the same record, carries only torch's "FB" padding extra, and its data
  lies inside the file: the data is then exactly where torch reads it.

Anything else raises NotStatic, and the caller hands the file to torch.load (weights_only) whole.
Every read goes through pread; reads inside the first page and the last 4 KiB are served from them
and noted (`used`), for the same-layout shortcut (engines/read/zip_layout.py); the others are noted
in `far` with the bytes read. Standard library only.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"
_CENTRAL_ENTRY = struct.Struct("<4s6H3I5HII")
_LOCAL_HEADER = struct.Struct("<4s5H3I2H")
#: what torch's zip reader reads of the file's end first; the first page is read with it
TAIL_BYTES = 4096
#: flags torch's writer (miniz) sets: a data descriptor follows the data (bit 3), and from miniz 3
#: names are UTF-8 (bit 11)
_FLAGS = (0x0008, 0x0808)
#: the most records a sample's archive is read with (a state dict of thousands of tensors is not a
#: sample: torch.load reads it)
MAX_RECORDS = 4096
#: the records torch.save writes besides data/<key>: what torch reads of each is checked by whoever
#: reads it; any other name is not torch.save's
_OTHER_RECORDS = frozenset({"data.pkl", ".format_version", ".storage_alignment", "byteorder", "version",
                            ".data/serialization_id"})
_STORAGE_NAME = re.compile(r"data/(0|[1-9][0-9]{0,8})")


class NotStatic(Exception):
    """Not a file this reader takes: torch.load (weights_only, behind the gate) reads it."""


class Archive:
    """torch's zip of `size` bytes read with pread(n, offset): its records, name -> (data offset,
    size), after the whole layout was checked (check()), and reads served from the first page and
    the last 4 KiB when they lie there."""

    def __init__(self, pread: Callable[[int, int], bytes], size: int):
        self.pread, self.size = pread, size
        self.head = pread(min(size, TAIL_BYTES), 0)
        self.tail_at = max(0, size - TAIL_BYTES)
        self.tail = pread(size - self.tail_at, self.tail_at)
        # the file ranges the parse read and depends on, those inside them that may differ between
        # files laid out alike (the CRCs; the archive folder, named after the file, at `named`), what
        # was read outside the two pages, and the ranges that need only hold digits (`numbers`): what
        # zip_layout.Layout compares the next file with
        self.used: list[tuple[int, int]] = []
        self.unused: list[tuple[int, int]] = []
        self.named: list[int] = []
        self.far: list[tuple[int, bytes]] = []
        self.numbers: list[tuple[int, int]] = []
        self.records: dict[str, tuple[int, int]] = {}
        self.prefix = ""

    def read(self, n: int, at: int, use: bool = True) -> bytes:
        """n bytes at `at`, noted as used by the parse (use False: the caller notes what it needs)."""
        if at + n <= len(self.head) or (at >= self.tail_at and at + n <= self.size):
            if use:
                self.used.append((at, at + n))
            if at + n <= len(self.head):
                return self.head[at : at + n]
            return self.tail[at - self.tail_at : at - self.tail_at + n]
        data = self.pread(n, at)
        if len(data) != n:
            raise NotStatic("the file ends early")
        self.far.append((at, data))
        return data

    def check(self) -> None:
        """Read the directory and every local header; NotStatic unless laid out as torch writes."""
        cd_offset, cd_size, entries = self._end_records()
        cd = self.read(cd_size, cd_offset)
        cursor, pos = 0, 0
        folded: set[str] = set()
        for _ in range(entries):
            name, size, header, pos = self._central_entry(cd, cd_offset, pos)
            if name.casefold() in folded:
                raise NotStatic("two records whose names differ only in case")
            folded.add(name.casefold())
            if header != cursor:
                raise NotStatic("a record not where torch's writer puts it")
            start = self._local_header(header, name)
            self.records[name] = (start, size)
            cursor = start + size + 16  # the data descriptor (not read: torch does not read it)
            if cursor > cd_offset:
                raise NotStatic("a record past the central directory")
        if pos != cd_size or cursor != cd_offset:
            raise NotStatic("bytes between the records and the central directory")

    def _end_records(self) -> tuple[int, int, int]:
        """(central directory offset, size, entries) from the end record and torch's zip64 pair."""
        if self.size < 22 + 20 + 56 or not self.head.startswith(_LOCAL):
            raise NotStatic("too small for torch's zip")
        end = self.read(22, self.size - 22)
        sig, disk, cd_disk, here, entries, cd_size, cd_offset, comment = struct.unpack("<4s4H2IH", end)
        if sig != _EOCD or disk or cd_disk or comment or here != entries:
            raise NotStatic("no end record where torch's writer puts it")
        loc = self.read(20, self.size - 42)
        sig, disk64, eocd64, disks = struct.unpack("<4sIQI", loc)
        if sig != _EOCD64_LOCATOR or disk64 or disks != 1 or eocd64 != self.size - 98:
            raise NotStatic("no zip64 locator where torch's writer puts it")
        rec = self.read(56, eocd64)
        (sig, rest, _, _, disk, cd_disk, here64, entries64, cd_size64,
         cd_offset64) = struct.unpack("<4sQ2H2I4Q", rec)
        if (sig != _EOCD64 or rest != 44 or disk or cd_disk or here64 != entries64
                or (entries64, cd_size64, cd_offset64) != (entries, cd_size, cd_offset)):
            raise NotStatic("a zip64 end record that disagrees with the end record")
        if cd_offset + cd_size != eocd64 or not 0 < entries <= MAX_RECORDS:
            raise NotStatic("a central directory not where torch's writer puts it")
        return cd_offset, cd_size, entries

    def _central_entry(self, cd: bytes, cd_offset: int, pos: int) -> tuple[str, int, int, int]:
        """(name, size, local header offset, next pos) of the entry at cd[pos:]."""
        if pos + 46 > len(cd):
            raise NotStatic("a broken central directory")
        (sig, _, _, flags, method, _, _, _, csize, usize, name_len, extra_len, comment_len, disk, _, attrs,
         header) = _CENTRAL_ENTRY.unpack_from(cd, pos)
        if (sig != _CENTRAL or flags not in _FLAGS or method or csize != usize or extra_len or comment_len or disk
                or attrs):
            raise NotStatic("a record torch's writer does not write (compressed, zip64, a folder...)")
        raw = cd[pos + 46 : pos + 46 + name_len]
        if len(raw) != name_len or not raw.isascii():
            raise NotStatic("a record name that is not plain ASCII")
        name = raw.decode("ascii")
        self.unused.append((cd_offset + pos + 16, cd_offset + pos + 20))  # the CRC
        self.named.append(cd_offset + pos + 46)
        if not self.prefix:
            folder, slash, _ = name.partition("/")
            if not slash or not folder:
                raise NotStatic("no archive folder")
            self.prefix = folder + "/"
        if not name.startswith(self.prefix):
            raise NotStatic("a record outside the archive folder")
        inner = name[len(self.prefix) :]
        if inner not in _OTHER_RECORDS and not _STORAGE_NAME.fullmatch(inner):
            raise NotStatic(f"a record torch.save does not write: {inner[:40]!r}")
        return inner, usize, header, pos + 46 + name_len

    def _local_header(self, header: int, inner: str) -> int:
        """Where the record's data starts, from its local header (checked)."""
        name_len = len(self.prefix) + len(inner)
        local = self.read(30 + name_len + 4, header)
        sig, _, flags, method, _, _, _, _, _, n, extra_len = _LOCAL_HEADER.unpack_from(local)
        if sig != _LOCAL or flags not in _FLAGS or method or n != name_len:
            raise NotStatic("a local header that is not its record's")
        if local[30 + len(self.prefix) : 30 + name_len] != inner.encode():
            raise NotStatic("a local header that names another record")
        self.named.append(header + 30)
        (padding,) = struct.unpack_from("<H", local, 32 + name_len)
        if local[30 + name_len : 32 + name_len] != b"FB" or extra_len != 4 + padding:
            raise NotStatic("a local extra field torch's writer does not write")
        start = header + 30 + name_len + extra_len
        if start > self.size:
            raise NotStatic("a record past the end of the file")
        return start

    def has(self, name: str) -> bool:
        return name in self.records

    def record(self, name: str) -> bytes:
        start, size = self.records[name]
        return self.read(size, start)

    def digits(self, name: str) -> bool:
        """Whether record `name` is ASCII digits; what differs from file to file (torch's
        serialization id) is noted so: the next file laid out alike must hold digits there too."""
        start, size = self.records[name]
        self.numbers.append((start, start + size))
        return self.read(size, start, use=False).isdigit()
