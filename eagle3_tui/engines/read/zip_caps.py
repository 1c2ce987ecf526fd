"""What torch.load would expand a torch zip to, read from its central directory before torch reads
it (engines/read/load.py): torch inflates a deflated record to the size its directory declares,
with no cap (a 1.5 MB file whose data.pkl expands to 1 GiB took 3.4 GB of memory, then read as a
fine sample). Read as miniz finds the directory (the end record in the last 64 KiB, the zip64 end
record when its locator is there); a file whose directory cannot be found so is left to torch,
which says what is wrong with it. Standard library only.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass

from eagle3_tui.engines.read.sample import SampleError
from eagle3_tui.names import printable

#: the most the deflated records of one file may expand to, together (as a .ckpt.gz: load.py)
MAX_INFLATED_BYTES = 1024**3
#: the most data.pkl may hold, deflated or not: a sample's is a few hundred bytes, a state dict of
#: a hundred thousand tensors' a few MB
MAX_PICKLE_BYTES = 64 << 20
_END_SEARCH = 65535 + 22
_CENTRAL = struct.Struct("<4s6H3I5HII")
_STEP = 1 << 20


@dataclass
class Expansion:
    deflated: bool  # some record is compressed: torch reads it inflated (not through a mapping)


def check_expansion(fd: int, size: int) -> Expansion:
    """Refuse (SampleError, one line) a torch zip that would expand past the caps; else say
    whether any record is compressed."""
    at = max(0, size - _END_SEARCH)
    tail = os.pread(fd, size - at, at)
    end = tail.rfind(b"PK\x05\x06")
    if end < 0 or len(tail) - end < 22:
        return Expansion(False)  # torch says what is wrong
    entries, cd_size, cd_offset = struct.unpack_from("<HII", tail, end + 10)
    loc = end - 20
    if loc >= 0 and tail[loc : loc + 4] == b"PK\x06\x07":
        (eocd64,) = struct.unpack_from("<Q", tail, loc + 8)
        rec = os.pread(fd, 56, eocd64) if eocd64 < size else b""
        if len(rec) == 56 and rec[:4] == b"PK\x06\x06":
            entries, cd_size, cd_offset = struct.unpack_from("<QQQ", rec, 32)
    if cd_offset + cd_size > size or cd_size > size:
        return Expansion(False)
    cd = os.pread(fd, cd_size, cd_offset)
    inflated, deflated, pos = 0, False, 0
    for _ in range(min(entries, len(cd) // 46)):
        if cd[pos : pos + 4] != b"PK\x01\x02" or pos + 46 > len(cd):
            break
        fields = _CENTRAL.unpack_from(cd, pos)
        method, usize, name_len, extra_len, comment_len = fields[4], fields[9], fields[10], fields[11], fields[12]
        name = cd[pos + 46 : pos + 46 + name_len]
        if usize == 0xFFFFFFFF:
            usize = _zip64_size(cd[pos + 46 + name_len : pos + 46 + name_len + extra_len], usize)
        pos += 46 + name_len + extra_len + comment_len
        if name.lower().endswith(b"/data.pkl") and usize > MAX_PICKLE_BYTES:
            raise SampleError(f"its data.pkl would take {_mib(usize)} (a sample's takes a few KB); refusing")
        if method:
            deflated = True
            inflated += usize
            if inflated > MAX_INFLATED_BYTES:
                raise SampleError(f"its compressed records expand to more than {_mib(MAX_INFLATED_BYTES)}; refusing")
            if method != 8 or not _inflates_to(fd, size, fields[16], fields[8], usize):
                # miniz fills what a broken stream does not with bytes nobody wrote
                raise SampleError(f"a compressed record ({printable(name.decode('utf-8', 'replace')[-40:])}) "
                                  "that does not expand to its size")
    return Expansion(deflated)


def _inflates_to(fd: int, size: int, header: int, csize: int, usize: int) -> bool:
    """Whether the deflated record at local header `header` expands to exactly usize bytes; read
    and inflated a MiB at a time, the output counted and dropped."""
    local = os.pread(fd, 30, header)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        return False
    name_len, extra_len = struct.unpack_from("<HH", local, 26)
    at = header + 30 + name_len + extra_len
    if csize == 0xFFFFFFFF or at + csize > size:
        return False
    inflate = zlib.decompressobj(-15)
    out, end, pending = 0, at + csize, b""
    while out <= usize and not inflate.eof:
        if not pending:
            if at >= end:
                return False
            pending = os.pread(fd, min(_STEP, end - at), at)
            if not pending:
                return False
            at += len(pending)
        out += len(inflate.decompress(pending, _STEP))
        pending = inflate.unconsumed_tail
    return inflate.eof and out == usize


def _zip64_size(extra: bytes, usize: int) -> int:
    pos = 0
    while pos + 4 <= len(extra):
        tag, n = struct.unpack_from("<HH", extra, pos)
        if tag == 1 and n >= 8:
            return struct.unpack_from("<Q", extra, pos + 4)[0]
        pos += 4 + n
    return usize


def _mib(n: int) -> str:
    return f"{n / 1024**3:.1f} GiB" if n >= 1024**3 else f"{n / 1024**2:.1f} MiB"
