"""What the user typed, parsed once: a local path or a file or folder on an SSH host.

Accepted forms (one parser for every command, the UI and the bookmarks):
  /data/x, ./x, ~/x, x              local
  [user@]host:path                  scp style; host may be an ~/.ssh/config alias
  [user@]host:2222:/path            scp style with a port (digits between two colons)
  [user@][::1]:path                 IPv6 literal in brackets
  ssh://[user@]host[:port]/path     URL; ssh://host/~/x is x relative to the home folder

As with scp, a colon before the first slash makes it remote: write ./a:b for a local file "a:b".
An empty remote path means the remote home folder.

Standard library only: every layer (sources, bookmarks, ui, commands) shares this one type.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass


class TargetError(ValueError):
    """The target text cannot be understood. str() is one line for the user."""


@dataclass(frozen=True)
class Target:
    host: str | None  # None for a local path
    user: str | None
    port: int | None
    path: str

    @property
    def is_remote(self) -> bool:
        return self.host is not None

    @property
    def place(self) -> tuple[str | None, str | None, int | None]:
        """Who serves the files: two targets with the same place share one connection."""
        return (self.user, self.host, self.port)

    def display(self) -> str:
        """The target as the user would type it (scp style); parse_target(display()) gives it back."""
        if self.host is None:
            return self.path
        user = f"{self.user}@" if self.user else ""
        port = f"{self.port}:" if self.port else ""
        return f"{user}{_host_text(self.host)}:{port}{self.path}"

    def with_path(self, path: str) -> Target:
        return Target(self.host, self.user, self.port, path)

    def canonical(self) -> Target:
        """The same file with one spelling of its path: local paths absolute, remote paths
        normalised and relative to the login's home ("~/x" and "x" name the same file)."""
        if self.host is None:
            return self.with_path(os.path.abspath(os.path.expanduser(self.path)))
        path = _home_relative(self.path)
        path = posixpath.normpath(path)
        if path.startswith("//"):
            path = "/" + path.lstrip("/")
        return self.with_path(path)

    @property
    def key(self) -> str:
        """One canonical string per file (bookmarks are keyed on it); itself a valid target text."""
        t = self.canonical()
        if t.host is None:
            return t.path
        user = f"{t.user}@" if t.user else ""
        if t.port is None:
            return f"{user}{_host_text(t.host)}:{t.path}"
        url_path = t.path if t.path.startswith("/") else "/~/" + ("" if t.path == "." else t.path)
        return f"ssh://{user}{_host_text(t.host)}:{t.port}{url_path}"


_URL = re.compile(
    r"^ssh://(?:(?P<user>[^@/]+)@)?(?P<host>\[[^\]/]+\]|[^:/\[\]]+)(?::(?P<port>\d*))?(?P<path>/.*)?$",
    re.DOTALL,
)
_SCP = re.compile(
    r"^(?:(?P<user>[^/]+)@)?(?P<host>\[[^\]/]+\]|[^:/@\[\]]+):(?:(?P<port>\d+):)?(?P<path>.*)$",
    re.DOTALL,
)


def _host_text(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _port(text: str | None, whole: str) -> int | None:
    if not text:
        return None
    port = int(text)
    if not 0 < port < 65536:
        raise TargetError(f"{whole}: port {port} is out of range")
    return port


def _home_relative(path: str) -> str:
    # "~" and "~/x" mean the home folder, which is where SFTP and the agent start.
    if path in ("", "~", "~/"):
        return "."
    if path.startswith("~/"):
        return path[2:] or "."
    return path


def parse_target(text: str) -> Target:
    if not text:
        raise TargetError("empty target: give a folder or file, e.g. /data or box:/data")
    if "\0" in text:
        raise TargetError("a target cannot contain a NUL byte")
    if text.startswith("ssh://"):
        m = _URL.match(text)
        if not m:
            raise TargetError(f"{text}: not a valid ssh:// target (ssh://[user@]host[:port]/path)")
        path = m["path"] or ""
        if path.startswith("/~"):
            path = path[1:]
        return Target(m["host"].strip("[]"), m["user"], _port(m["port"], text), _home_relative(path))
    slash, colon = text.find("/"), text.find(":")
    if not (colon > 0 and (slash < 0 or colon < slash)):
        return Target(None, None, None, os.path.expanduser(text))
    m = _SCP.match(text)
    if not m or not m["host"].strip("[]"):
        raise TargetError(f"{text}: not a valid remote target ([user@]host:path)")
    return Target(m["host"].strip("[]"), m["user"], _port(m["port"], text), _home_relative(m["path"]))


def target_key(text: str) -> str:
    """The canonical key of a target text (local relative paths become absolute)."""
    return parse_target(text).key
