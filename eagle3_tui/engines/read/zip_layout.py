"""The same-layout shortcut of the quick scan's own reader (engines/read/torch_zip.py): the files of
a shard are laid out alike, and the next one is known as such without parsing it.

A Layout keeps every byte the last parse read and depends on (zip_archive.Archive: the end records,
the central directory, every local header, data.pkl and the small records), less the CRCs (which
the parse does not read and which differ with the data) and the archive folder at the head of every
name (torch names it after the file: data_12/...), which must be one folder name of the same length
in the next file, of plain ASCII. A file of the same size whose every other such byte is equal is
parsed into the same object: the parse is a function of those bytes. The bytes of the first page
and the last 4 KiB are compared from the pages the next file's Archive reads anyway; the local
headers that lie elsewhere (the big storages') are read again and compared.

Made when a file is parsed, worked out only when a file of its size comes next (files of varying
lengths pay nothing for it). Standard library only.
"""

from __future__ import annotations

from typing import Any

from eagle3_tui.engines.read.zip_archive import TAIL_BYTES, Archive, NotStatic


class Layout:
    __slots__ = ("z", "size", "built", "pieces", "named", "far", "plen", "numbers")

    def __init__(self, z: Archive, built: Any):
        z.pread = _no_read  # its pages are all it keeps: never a read on a descriptor since closed (or reused)
        self.z, self.size, self.built = z, z.size, built
        self.pieces: list | None = None  # worked out by _prepare
        self.named: list = []
        self.far: list = []
        self.numbers: list = []
        self.plen = 0

    def _prepare(self) -> bool:
        """Work out the bytes to compare; False when this file's layout cannot be known so."""
        z = self.z
        plen = len(z.prefix)
        if z.size <= 2 * TAIL_BYTES or not z.named or not z.prefix.isascii():
            return False
        in_pages = [at for at in z.named if not _inside_far(z.far, at, plen)]
        skip = sorted(z.unused + [(at, at + plen) for at in in_pages])
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
        if not in_pages:
            return False
        for a, b in z.numbers:
            in_tail = a >= z.tail_at
            if not in_tail and b > len(z.head) or in_tail and b > z.size:
                return False
            base = z.tail_at if in_tail else 0
            self.numbers.append((in_tail, a - base, b - base))
        self.named = [(at >= z.tail_at, at - (z.tail_at if at >= z.tail_at else 0)) for at in in_pages]
        # the local headers read elsewhere: (offset, bytes, where the folder name lies in them)
        self.far = [(at, data, [n - at for n in z.named if at <= n < at + len(data)]) for at, data in z.far]
        self.pieces, self.plen = out, plen
        return True

    def matches(self, z: Archive) -> bool:
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
        if not all((tail if in_tail else head)[a : a + self.plen] == prefix for in_tail, a in self.named):
            return False
        if not all((tail if in_tail else head)[a:b].isdigit() for in_tail, a, b in self.numbers):
            return False
        plen = self.plen
        for at, expected, names in self.far:
            got = z.pread(len(expected), at)
            if len(got) != len(expected):
                return False
            last = 0
            for rel in names:
                if got[last:rel] != expected[last:rel] or got[rel : rel + plen] != prefix:
                    return False
                last = rel + plen
            if got[last:] != expected[last:]:
                return False
        return True


def _inside_far(far: list[tuple[int, bytes]], at: int, n: int) -> bool:
    return any(start <= at and at + n <= start + len(data) for start, data in far)


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
