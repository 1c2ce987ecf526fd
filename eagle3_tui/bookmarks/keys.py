"""Bookmark keys: one canonical string per target, so the same file typed two ways is one bookmark.

The key is itself a valid target (parsing a key gives the same key back), so the UI can open a
bookmark by handing its key to the shared target parser.

TODO(lead): switch _split_target to eagle3_tui.sources.target.parse_target once it is on main;
this private parser only knows the forms issue 3 lists (local path, [user@]host:path,
ssh://[user@]host[:port]/path) plus [user@]host:PORT:path from ARCHITECTURE.md.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass

_PORT_PATH = re.compile(r"^(\d{1,5}):(.*)$", re.S)


class TargetError(ValueError):
    """A target text that cannot name a file. One line for the user."""


@dataclass(frozen=True)
class TargetParts:
    host: str | None  # None for a local path
    user: str | None
    port: int | None
    path: str

    @property
    def key(self) -> str:
        return make_key(self.host, self.path, user=self.user, port=self.port)


def target_key(text: str) -> str:
    """The canonical bookmark key of a target text (local relative paths become absolute)."""
    return split_target(text).key


def make_key(host: str | None, path: str, *, user: str | None = None, port: int | None = None) -> str:
    """The key of a file given as parts, as a browser knows them (host None means local)."""
    if host is None:
        return os.path.abspath(os.path.expanduser(path))
    path = _remote_path(path)
    host_text = f"[{host}]" if ":" in host else host
    user_at = f"{user}@" if user else ""
    if port is None:
        return f"{user_at}{host_text}:{path}"
    url_path = path if path.startswith("/") else "/~/" + ("" if path == "." else path)
    return f"ssh://{user_at}{host_text}:{port}{url_path}"


def split_target(text: str) -> TargetParts:
    if not text:
        raise TargetError("empty target")
    if "\0" in text:
        raise TargetError("a target cannot contain a NUL byte")
    if text.startswith("ssh://"):
        return _split_url(text)
    head, colon, rest = text.partition(":")
    # scp's rule: a colon before the first slash makes it remote ("a/b:c" is a local file).
    if not colon or "/" in head or text.startswith(("~", ".")):
        return TargetParts(None, None, None, os.path.abspath(os.path.expanduser(text)))
    if "[" in head:  # [user@][v6]:path
        close = text.find("]")
        if close < 0 or text[close + 1 : close + 2] != ":":
            raise TargetError(f"bad host in target: {text!r}")
        head, rest = text[: close + 1], text[close + 2 :]
    user, host = _split_user_host(head, text)
    port = None
    m = _PORT_PATH.match(rest)
    if m and (m.group(2) == "" or m.group(2).startswith(("/", "~"))):
        port, rest = _port(m.group(1), text), m.group(2)
    return TargetParts(host, user, port, _remote_path(rest))


def _split_url(text: str) -> TargetParts:
    authority, slash, path = text[len("ssh://") :].partition("/")
    user, hostport = _split_user_host_raw(authority)
    port = None
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0:
            raise TargetError(f"bad host in target: {text!r}")
        host, after = hostport[1:close], hostport[close + 1 :]
        if after:
            if not after.startswith(":"):
                raise TargetError(f"bad host in target: {text!r}")
            port = _port(after[1:], text)
    else:
        host, colon, port_text = hostport.partition(":")
        if colon:
            port = _port(port_text, text)
    if not host:
        raise TargetError(f"no host in target: {text!r}")
    path = "/" + path if slash else "."
    if path == "/~" or path.startswith("/~/"):
        path = path[1:]
    return TargetParts(host, user, port, _remote_path(path))


def _split_user_host(head: str, text: str) -> tuple[str | None, str]:
    user, host = _split_user_host_raw(head)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host:
        raise TargetError(f"no host in target: {text!r}")
    return user, host


def _split_user_host_raw(authority: str) -> tuple[str | None, str]:
    if "@" in authority:
        user, _, host = authority.rpartition("@")
        return (user or None), host
    return None, authority


def _port(text: str, target: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise TargetError(f"bad port in target: {target!r}")
    return int(text)


def _remote_path(path: str) -> str:
    """Remote paths are relative to the login's home; "~/x" and "x" name the same file."""
    if path in ("", "~"):
        return "."
    if path.startswith("~/"):
        path = path[2:] or "."
    path = posixpath.normpath(path)
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    return path
