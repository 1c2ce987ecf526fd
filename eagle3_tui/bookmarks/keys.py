"""Bookmark keys: one canonical string per target, so the same file typed two ways is one bookmark.

The key is itself a valid target (parsing a key gives the same key back), so the UI can open a
bookmark by handing its key to the shared target parser.

Parsing is eagle3_tui.sources.target.parse_target's (one parser for the whole tool); this
module only canonicalises: local paths absolute, remote paths normalised relative to home.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass



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
    """Parse with the one shared target parser, then canonicalise the path for use as a key."""
    from eagle3_tui.sources.target import TargetError as ParseError
    from eagle3_tui.sources.target import parse_target

    if "\0" in text:
        raise TargetError("a target cannot contain a NUL byte")
    try:
        t = parse_target(text)
    except ParseError as err:
        raise TargetError(str(err)) from None
    if t.host is None:
        return TargetParts(None, None, None, os.path.abspath(os.path.expanduser(t.path)))
    return TargetParts(t.host, t.user, t.port, _remote_path(t.path))


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
