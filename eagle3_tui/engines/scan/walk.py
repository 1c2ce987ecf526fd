"""The listing of a scan (engines/scan/records.py scan_tree): every file under a dataset folder,
folders in natural order, with what a cached record is matched on (size, mtime, file_stamp), and
the sample index a file's name carries (file_index).

Shipped to the remote box with the scan: the standard library only.
"""

from __future__ import annotations

import os
import re
import stat as stat_mod
import threading
from collections.abc import Iterator
from typing import Optional, Tuple

from eagle3_tui.engines.read.file_names import natural
from eagle3_tui.engines.results.errors import Cancelled

#: file name patterns a producer uses for samples: data_12.ckpt, hs_3.safetensors
_INDEX = re.compile(r"^[A-Za-z]+_(\d+)\.")


def file_index(name: str) -> int | None:
    m = _INDEX.match(name)
    return int(m.group(1)) if m else None


#: (relative path, size, mtime, stamp); Optional spelled out: an alias is evaluated at import, and
#: the box's Python may be 3.9, where `int | None` outside an annotation raises
Listed = Tuple[str, Optional[int], Optional[float], Optional[str]]


def file_stamp(st: os.stat_result) -> str:
    """What, beside size and mtime, says a file is the one a cached record was made of: its inode
    and ctime, which nobody can set back (a rewrite with the same size and `touch -r` keeps size
    and mtime; git's index keys on both for the same reason)."""
    return f"{st.st_ino}:{st.st_ctime_ns}"


def walk(root: str, cancel: threading.Event | None = None) -> Iterator[Listed]:
    """(relative path, size, mtime, file_stamp) of every file under root, folders in natural order.

    Symbolic links to files are followed (size None for a dead link); links to folders are not,
    so a loop cannot make the walk endless. Hidden names (".*") are skipped. A FIFO, socket or
    device comes with size None too (scan_file says what it is, without opening it).
    """
    stack = [""]
    while stack:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                entries = sorted(it, key=lambda d: natural(d.name))
        except OSError:
            if not rel:
                raise
            yield rel + "/", None, None, None  # an unreadable folder is reported like a file error
            continue
        subdirs = []
        for d in entries:
            if d.name.startswith("."):
                continue
            path = f"{rel}/{d.name}" if rel else d.name
            try:
                if d.is_dir(follow_symlinks=False):
                    subdirs.append(path)
                    continue
                st = d.stat(follow_symlinks=True)
            except OSError:
                yield path, None, None, None
                continue
            if stat_mod.S_ISREG(st.st_mode):
                yield path, st.st_size, st.st_mtime, file_stamp(st)
            elif not stat_mod.S_ISDIR(st.st_mode):  # never opened: reading a FIFO would block
                yield path, None, st.st_mtime, None
        stack.extend(reversed(subdirs))
