"""SFTP for boxes where the agent cannot run: listing, fast downloads, and the local file cache.

Downloads land in cache_dir()/sftp/<key>/<file name>, keyed by host, path, size and mtime, so a
file that changed on the box is fetched again. A partial download never takes the final name.
"""

from __future__ import annotations

import asyncio
import errno as errno_mod
import hashlib
import os
import stat as stat_mod
import struct
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import NamedTuple

import asyncssh

from eagle3_tui.sources.base import Entry, Progress
from eagle3_tui.userdirs import cache_dir

MAX_REQUESTS = 32  # parallel reads in flight: one at a time is latency-bound; 32 measured best here
READDIR_AHEAD = 8  # READDIR requests in flight while listing a folder
FIRST_PAGE = 100  # OpenSSH answers READDIR with at most 100 names: show them as soon as they come


def entry_from_attrs(name: str, attrs: asyncssh.SFTPAttrs | None) -> Entry:
    """attrs follow symlinks already (or are None for a dead link)."""
    if attrs is None or attrs.permissions is None:
        return Entry(name, "link")
    mode = attrs.permissions
    if stat_mod.S_ISDIR(mode):
        return Entry(name, "dir", None, attrs.mtime)
    if stat_mod.S_ISREG(mode):
        return Entry(name, "file", attrs.size, attrs.mtime)
    return Entry(name, "other", None, attrs.mtime)


def sftp_errno(err: asyncssh.SFTPError) -> int:
    if isinstance(err, asyncssh.SFTPNoSuchFile):
        return errno_mod.ENOENT
    if isinstance(err, asyncssh.SFTPPermissionDenied):
        return errno_mod.EACCES
    return errno_mod.EIO


def oserror_from_sftp(err: asyncssh.SFTPError) -> OSError:
    return OSError(sftp_errno(err), err.reason or type(err).__name__)


async def _follow(sftp: asyncssh.SFTPClient, folder: str, name: asyncssh.SFTPName) -> Entry:
    attrs: asyncssh.SFTPAttrs | None = name.attrs
    filename = _text(name.filename)
    if name.attrs.permissions is not None and stat_mod.S_ISLNK(name.attrs.permissions):
        try:
            attrs = await sftp.stat(_join(folder, filename))
        except asyncssh.SFTPError:
            attrs = None
    return entry_from_attrs(filename, attrs)


def _text(filename: str | bytes) -> str:
    """A name as the client decoded it. asyncssh types names as either, bytes being for a client
    opened without a path encoding; ours has one (utf-8, its default), so this is a str."""
    return filename if isinstance(filename, str) else filename.decode("utf-8", "surrogateescape")


def _join(folder: str, name: str) -> str:
    return name if folder in ("", ".") else folder.rstrip("/") + "/" + name


async def _names(sftp: asyncssh.SFTPClient, path: str) -> AsyncIterator[list[asyncssh.SFTPName]]:
    """The folder's names in READDIR batches, with READDIR_AHEAD requests in flight.

    asyncssh's scandir waits a round trip per batch (OpenSSH: 100 names), which made 20,000
    names cost ~0.5 s on loopback. READDIRs on one handle are answered in order by both OpenSSH
    and asyncssh servers, each with the next batch, so they pipeline; asyncssh has no public
    call for that, hence its handler.
    """
    handler = sftp._handler
    handle = await handler.opendir(sftp.compose_path(path))
    pending: deque[asyncio.Task] = deque()
    readdir = _fast_readdir if _can_parse(sftp, handler) else _slow_readdir

    def ask() -> None:
        pending.append(asyncio.ensure_future(readdir(sftp, handle)))

    try:
        for _ in range(READDIR_AHEAD):
            ask()
        while pending:
            try:
                names, at_end = await pending.popleft()
            except asyncssh.SFTPEOFError:
                break
            yield names
            if at_end:
                break
            ask()
    finally:
        # Let the requests still in flight come back (EOF, or names nobody wants) before the
        # handle closes; cancelled ones would leave replies for nobody.
        await asyncio.gather(*pending, return_exceptions=True)
        try:
            await handler.close(handle)
        except asyncssh.SFTPError:
            pass


async def _not_a_folder(sftp: asyncssh.SFTPClient, path: str) -> None:
    """Servers answer listing a file with "no such file" (OpenSSH) or a failure: say what the
    agent says."""
    try:
        attrs = await sftp.stat(path)
    except asyncssh.SFTPError:
        return
    if attrs.permissions is not None and not stat_mod.S_ISDIR(attrs.permissions):
        raise OSError(errno_mod.ENOTDIR, "Not a directory")


async def _slow_readdir(sftp: asyncssh.SFTPClient, handle: bytes) -> tuple[list[asyncssh.SFTPName], bool]:
    names, at_end = await sftp._handler.readdir(handle)
    for name in names:
        if isinstance(name.filename, bytes):  # always: the handler's names are not decoded yet
            name.filename = sftp.decode(name.filename)
    return list(names), at_end


# SFTP v3 NAME replies, read here: asyncssh builds two Record objects per name (~15 us each),
# which was most of a 20,000-name listing's client time. Same fields, same surrogateescape.
_U32 = struct.Struct(">I")
_U32X2 = struct.Struct(">II")
_U64 = struct.Struct(">Q")
_FXP_READDIR, _FXP_STATUS, _FXP_NAME = 12, 101, 104
_SIZE, _UIDGID, _PERMISSIONS, _ACMODTIME, _EXTENDED = 0x1, 0x2, 0x4, 0x8, 0x80000000


def _can_parse(sftp: asyncssh.SFTPClient, handler) -> bool:
    return getattr(handler, "_version", None) == 3 and all(
        hasattr(handler, a) for a in ("_send_request", "_packet_handlers", "_loop")) and all(
        hasattr(sftp, a) for a in ("_path_encoding", "_path_errors"))


async def _fast_readdir(sftp: asyncssh.SFTPClient, handle: bytes) -> tuple[list[_Name], bool]:
    handler = sftp._handler
    waiter = handler._loop.create_future()
    handler._send_request(_FXP_READDIR, [_U32.pack(len(handle)) + handle], waiter)
    kind, packet = await waiter
    if kind == _FXP_STATUS:
        handler._packet_handlers[kind](handler, packet)  # raises the SFTPError (EOF at the end)
        raise asyncssh.SFTPBadMessage("READDIR answered OK without names")
    if kind != _FXP_NAME:
        raise asyncssh.SFTPBadMessage(f"unexpected reply {kind} to READDIR")
    try:
        return _parse_names(packet.get_remaining_payload(), sftp._path_encoding, sftp._path_errors), False
    except (struct.error, IndexError):
        raise asyncssh.SFTPBadMessage("malformed READDIR reply") from None
    except UnicodeDecodeError:
        raise asyncssh.SFTPBadMessage("Unable to decode name") from None  # as sftp.decode says it


def _parse_names(data: bytes, encoding: str | None, errors: str) -> list[_Name]:
    """The names of a NAME reply; file names decoded as SFTPClient.decode does (bytes when
    the client has no path encoding), without a method call per name."""
    (count,) = _U32.unpack_from(data, 0)
    off = 4
    names = []
    for _ in range(count):
        (n,) = _U32.unpack_from(data, off)
        filename = data[off + 4 : off + 4 + n]
        off += 4 + n
        (n,) = _U32.unpack_from(data, off)  # longname: not needed
        off += 4 + n
        (flags,) = _U32.unpack_from(data, off)
        off += 4
        size = permissions = mtime = None
        if flags & _SIZE:
            (size,) = _U64.unpack_from(data, off)
            off += 8
        if flags & _UIDGID:
            off += 8
        if flags & _PERMISSIONS:
            (permissions,) = _U32.unpack_from(data, off)
            off += 4
        if flags & _ACMODTIME:
            _atime, mtime = _U32X2.unpack_from(data, off)
            off += 8
        if flags & _EXTENDED:
            (n,) = _U32.unpack_from(data, off)
            off += 4
            for _ in range(2 * n):
                (length,) = _U32.unpack_from(data, off)
                off += 4 + length
        if off > len(data):
            raise IndexError("past the end")
        names.append(_Name(filename.decode(encoding, errors) if encoding else filename,
                           _Attrs(size, permissions, mtime)))
    return names


class _Name(NamedTuple):
    """The SFTPName fields this module reads."""

    filename: str | bytes  # bytes when the client has no path encoding, as asyncssh's SFTPName
    attrs: _Attrs


class _Attrs:
    """The SFTPAttrs fields this module reads."""

    __slots__ = ("mtime", "permissions", "size")

    def __init__(self, size: int | None, permissions: int | None, mtime: int | None):
        self.size, self.permissions, self.mtime = size, permissions, mtime


async def list_pages(sftp: asyncssh.SFTPClient, path: str, page_size: int) -> AsyncIterator[list[Entry]]:
    page: list[asyncssh.SFTPName] = []
    limit = min(page_size, FIRST_PAGE)
    try:
        async for names in _names(sftp, path):
            for name in names:
                if name.filename in (".", ".."):
                    continue
                page.append(name)
                if len(page) >= limit:
                    yield await _entries(sftp, path, page)
                    page, limit = [], page_size
    except asyncssh.SFTPError as err:
        if isinstance(err, (asyncssh.SFTPConnectionLost, asyncssh.SFTPNoConnection)):
            raise
        await _not_a_folder(sftp, path)
        raise oserror_from_sftp(err) from None
    if page:
        yield await _entries(sftp, path, page)


async def _entries(sftp: asyncssh.SFTPClient, folder: str, names: list[asyncssh.SFTPName]) -> list[Entry]:
    links = [n for n in names if n.attrs.permissions is not None and stat_mod.S_ISLNK(n.attrs.permissions)]
    if not links:  # the common case: no stat round trips at all
        return [entry_from_attrs(_text(n.filename), n.attrs) for n in names]
    return list(await asyncio.gather(*(_follow(sftp, folder, n) for n in names)))


async def stat(sftp: asyncssh.SFTPClient, path: str) -> Entry:
    name = os.path.basename(path.rstrip("/")) or path
    try:
        return entry_from_attrs(name, await sftp.stat(path))
    except asyncssh.SFTPNoSuchFile:
        try:
            await sftp.lstat(path)
        except asyncssh.SFTPError as err:
            raise oserror_from_sftp(err) from None
        return Entry(name, "link")
    except asyncssh.SFTPError as err:
        if isinstance(err, (asyncssh.SFTPConnectionLost, asyncssh.SFTPNoConnection)):
            raise
        raise oserror_from_sftp(err) from None


async def download(sftp: asyncssh.SFTPClient, path: str, dest: Path, progress: Progress | None = None) -> None:
    """Copy remote `path` to `dest` with many reads in flight. A partial file never takes dest's name."""
    partial = dest.with_name(dest.name + ".partial")

    def handler(_src: bytes, _dst: bytes, done: int, total: int) -> None:
        if progress is not None:
            progress(done, total)

    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        await sftp.get(
            path, os.fsencode(partial), max_requests=MAX_REQUESTS, progress_handler=handler
        )
        os.replace(partial, dest)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def cache_path(where: str, path: str, size: int | None, mtime: float | None) -> Path:
    key = hashlib.sha256(
        "\0".join([where, path, str(size), repr(mtime)]).encode("utf-8", "surrogateescape")
    ).hexdigest()
    name = os.path.basename(path.rstrip("/")) or "file"
    return cache_dir() / "sftp" / key[:2] / key / name
