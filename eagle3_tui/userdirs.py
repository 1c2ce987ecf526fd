"""Where eagle3-tui keeps the user's own data: one seam that tests and flags redirect.

EAGLE3_TUI_DATA_DIR / EAGLE3_TUI_CACHE_DIR override platformdirs' locations (which follow
XDG_DATA_HOME / XDG_CACHE_HOME); none of them may lie inside the dataset inspected (writes_inside).
"""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    override = os.environ.get("EAGLE3_TUI_DATA_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_data_dir("eagle3-tui", appauthor=False))


def cache_dir() -> Path:
    override = os.environ.get("EAGLE3_TUI_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("eagle3-tui", appauthor=False))


def _chosen(ours: str, xdg: str, where) -> tuple[str, str | None]:
    """(the variable that chose a folder, the folder used): ours, else the XDG variable that
    platformdirs follows (XDG_CACHE_HOME=DATASET/.cache put the scan cache in the dataset)."""
    if os.environ.get(ours):
        return ours, os.environ[ours]
    if os.environ.get(xdg, "").strip():
        return xdg, str(where())
    return ours, None


def is_inside(folder: str | os.PathLike, root: str | os.PathLike) -> bool:
    """`folder` is `root` or below it, links resolved (a folder not made yet counts by its path)."""
    try:
        Path(folder).resolve().relative_to(Path(root).resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def writes_inside(target: str | os.PathLike, data: str | os.PathLike | None = None, *,
                  data_too: bool = True) -> str | None:
    """One line saying which folder the user chose for our own files (--data-dir,
    EAGLE3_TUI_DATA_DIR, EAGLE3_TUI_CACHE_DIR, or XDG_DATA_HOME / XDG_CACHE_HOME) lies inside the local dataset `target` (a file
    counts by its folder), None when none does. The tool never writes into the data it inspects
    (bookmarks.sqlite3, exports, the scan cache). The default user folders are not checked:
    browsing ~ or / with them is fine, and exports still refuse a folder inside the view's."""
    root = Path(target)
    if root.exists() and not root.is_dir():  # a file: its folder (a missing path is said later, as it is)
        root = root.parent
    chosen: list[tuple[str, str | os.PathLike[str] | None]] = [_chosen("EAGLE3_TUI_CACHE_DIR", "XDG_CACHE_HOME", cache_dir)]
    if data_too:  # `scan` writes only its cache
        chosen.insert(0, ("--data-dir", data) if data else _chosen("EAGLE3_TUI_DATA_DIR", "XDG_DATA_HOME", data_dir))
    for name, folder in chosen:
        if folder and is_inside(folder, root):
            return (f"{name} {os.path.abspath(folder)} is inside the dataset {os.path.abspath(root)}: eagle3-tui never writes into the data it "
                    "inspects; choose a folder outside it")
    return None
