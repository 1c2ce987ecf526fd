"""Where eagle3-tui keeps the user's own data: one seam that tests and flags redirect.

EAGLE3_TUI_DATA_DIR / EAGLE3_TUI_CACHE_DIR override platformdirs' locations.
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
