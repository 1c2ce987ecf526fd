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
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path

import asyncssh

from eagle3_tui.sources.base import Entry, Progress
from eagle3_tui.userdirs import cache_dir

MAX_REQUESTS = 32  # parallel reads in flight: one at a time is latency-bound; 32 measured best here
READDIR_AHEAD = 8  # READDIR requests in flight while listing a folder
FIRST_PAGE = 100  # OpenSSH answers READDIR with at most 100 names: show them as soon as they come


def entry_from_attrs(name: str, attrs: asyncssh.SFTPAttrs) -> Entry:
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
    attrs = name.attrs
    if attrs.permissions is not None and stat_mod.S_ISLNK(attrs.permissions):
        try:
            attrs = await sftp.stat(_join(folder, name.filename))
        except asyncssh.SFTPError:
            attrs = None
    return entry_from_attrs(name.filename, attrs)


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

    def ask() -> None:
        pending.append(asyncio.ensure_future(handler.readdir(handle)))

    try:
        for _ in range(READDIR_AHEAD):
            ask()
        while pending:
            try:
                names, at_end = await pending.popleft()
            except asyncssh.SFTPEOFError:
                break
            for name in names:
                name.filename = sftp.decode(name.filename)
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
        raise oserror_from_sftp(err) from None
    if page:
        yield await _entries(sftp, path, page)


async def _entries(sftp: asyncssh.SFTPClient, folder: str, names: list[asyncssh.SFTPName]) -> list[Entry]:
    links = [n for n in names if n.attrs.permissions is not None and stat_mod.S_ISLNK(n.attrs.permissions)]
    if not links:  # the common case: no stat round trips at all
        return [entry_from_attrs(n.filename, n.attrs) for n in names]
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
