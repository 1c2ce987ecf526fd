"""Folder paths and entries as the browser shows them: parents (also of remote paths relative
to the login's home), shard folders, and what to say about an entry. No Textual here."""

from __future__ import annotations

import posixpath
import re
from datetime import datetime

from eagle3_tui.names import printable
from eagle3_tui.sources.base import Entry
from eagle3_tui.ui.shared.format import is_sample_name


def describe_entry(entry: Entry) -> str:
    """The status line for the entry under the cursor."""
    parts = [printable(entry.name) + ("/" if entry.kind == "dir" else "")]
    if entry.kind == "file" and entry.size is not None:
        parts.append(f"{entry.size:,} bytes")
    elif entry.kind == "link":
        parts.append("dead link")
    elif entry.kind == "other":
        parts.append("not a regular file")
    if entry.mtime is not None:
        parts.append("modified " + datetime.fromtimestamp(entry.mtime).strftime("%Y-%m-%d %H:%M"))
    return " · ".join(parts)


#: what the sample panel says about an entry that is not a sample (special files are never opened)
KIND_NOTES = {
    "link": "a link to nothing (dead link)",
    "other": "not a regular file (a FIFO, socket or device): never opened",
    "fifo": "a FIFO (named pipe): never opened",
    "socket": "a socket: never opened",
    "device": "a device: never opened",
}


def entry_note(entry: Entry, count: int | None) -> str:
    """What the sample panel says when the cursor is on something that is not a sample."""
    if entry.kind == "dir":
        counted = "" if count is None else f" holding {count:,} {'entry' if count == 1 else 'entries'}"
        return f"A folder{counted}: l opens it."
    if entry.kind == "file":
        size = "" if entry.size is None else f" of {entry.size:,} byte{'' if entry.size == 1 else 's'}"
        return f"A file{size}: l views text, else tries it as a sample."
    note = KIND_NOTES.get(entry.kind, KIND_NOTES["other"])
    return note[0].upper() + note[1:] + "."


_DIGITS = re.compile(r"\d+")


def shard_pattern(name: str) -> str | None:
    """rows_0-2000 and rows_2000-4000 share "rows_#-#"; a name without digits is no shard."""
    pattern, count = _DIGITS.subn("#", name.casefold())
    return pattern if count else None


def sample_at_end(entries: list[Entry], step: int, text_filter: str = "") -> str | None:
    """The first (step 1) or last (step -1) sample file's name among `entries` (natural order)."""
    needle = text_filter.casefold()
    for e in (entries if step > 0 else reversed(entries)):
        if e.kind == "file" and is_sample_name(e.name) and needle in e.name.casefold():
            return e.name
    return None


def parent_folder(path: str) -> str:
    """The folder above `path`. Remote paths may be relative to the login's home folder
    ("data/x", "."), whose parents are "data", "." and "..", never "/"."""
    path = path.rstrip("/") or "/"
    if path.startswith("/"):
        return posixpath.dirname(path) or "/"
    if path == ".":
        return ".."
    if posixpath.basename(path) == "..":
        return path + "/.."
    return posixpath.dirname(path) or "."


def folder_and_name(path: str) -> tuple[str, str]:
    """("/data/x", "a.pt") for "/data/x/a.pt"; a bare relative name lives in "."."""
    folder, name = posixpath.split(path)
    return folder or ("/" if path.startswith("/") else "."), name
