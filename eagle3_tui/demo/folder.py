"""The demo's folder: whether `eagle3-tui demo` may write into it, and whether it already holds a
demo it can reopen as it is.

A folder is written into only when it is new, empty, or an earlier demo (its README.txt starts
with README_MARK); anything else is refused and left untouched. A finished demo keeps a stamp,
STAMP: the format of the code that wrote it (a digest of the demo package's sources, so any change
to how the demo is written counts, with no version number to forget), the options it was written
with, and its manifest. A demo whose stamp matches this code and these options, with every file it
lists still there, is reopened without writing a byte.

Standard library only: reopening a demo imports no torch.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from eagle3_tui.demo.layout import README_MARK
from eagle3_tui.demo.manifest import DemoManifest, listed_files

NEW = "a new or empty folder"  # reopenable's reason when there is nothing to rewrite
STAMP = ".eagle3-demo.json"  # hidden: a scan of the demo skips it, the listing shows it after the folders


@functools.lru_cache(maxsize=1)
def format_digest() -> str:
    """A digest of the demo package's sources: the same code writes the same demo."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def is_demo(directory: str) -> bool:
    """The folder holds a demo (of any version): its README.txt starts with README_MARK."""
    try:
        with open(os.path.join(directory, "README.txt"), encoding="utf-8", errors="replace") as f:
            return f.read(len(README_MARK)) == README_MARK
    except OSError:
        return False


def check_target(directory: str) -> None:
    """Raise FileExistsError unless `directory` is new, empty or an earlier demo."""
    if not os.path.exists(directory):
        return
    if not os.path.isdir(directory):
        raise FileExistsError(f"{directory}: exists and is not a folder")
    if os.listdir(directory) and not is_demo(directory):
        raise FileExistsError(f"{directory}: not empty and not a demo dataset; choose another folder "
                              "(nothing in it was changed)")


def remove_stale_captures(directory: str, written: set[str]) -> None:
    """An earlier demo with another seed may have named a capture differently: drop it, so that
    infer/ holds exactly what README.txt lists (called only on a demo's own folder)."""
    infer = os.path.join(directory, "infer")
    for name in os.listdir(infer):
        if name not in written and name.startswith(("ok_", "fault_", "hs_")):
            os.remove(os.path.join(infer, name))


def demo_options(seed: int, drafter: bool, real: bool) -> dict[str, Any]:
    """The options a demo is written with, as its stamp keeps them."""
    return {"seed": seed, "drafter": drafter, "real": real}


def unstamp(directory: str) -> None:
    """Drop the stamp before writing: a demo half rewritten must not be reopened as finished."""
    try:
        os.remove(os.path.join(directory, STAMP))
    except FileNotFoundError:
        pass


def write_stamp(directory: str, options: dict[str, Any], manifest: DemoManifest) -> None:
    """Mark the demo finished, by this code, with these options (written last)."""
    stamp = {"format": format_digest(), "options": options, "manifest": manifest}
    path = os.path.join(directory, STAMP)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(stamp, f)
    os.replace(path + ".tmp", path)


def reopenable(directory: str, options: dict[str, Any]) -> tuple[DemoManifest | None, str]:
    """(the manifest of the demo in `directory`, how it was found) when it can be opened as it is;
    (None, why it must be written) otherwise. Raises FileExistsError for a folder that is not a
    demo (check_target): such a folder is never written into."""
    check_target(directory)
    if not os.path.isdir(directory) or not os.listdir(directory):
        return None, NEW
    try:
        with open(os.path.join(directory, STAMP), encoding="utf-8") as f:
            stamp = json.load(f)
        manifest: DemoManifest = stamp["manifest"]
        written_with, written_by = stamp["options"], stamp["format"]
    except (OSError, ValueError, KeyError, TypeError):
        return None, "written by an earlier eagle3-tui, or not finished"
    if written_by != format_digest():
        return None, "written by another version of the demo's code"
    if written_with != options:
        held = ", ".join(f"{k} {v}" for k, v in sorted(written_with.items()) if options.get(k) != v)
        return None, f"it held {held}"
    gone = [rel for rel in listed_files(manifest) if not os.path.isfile(os.path.join(directory, rel))]
    if gone:
        return None, f"{gone[0]} is missing" + (f" (and {len(gone) - 1} more)" if len(gone) > 1 else "")
    manifest["dir"] = directory  # as given this time: the paths printed and opened are relative to it
    return manifest, "written earlier by this version, with these options"
