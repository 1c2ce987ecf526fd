"""The dataset view left by enter on a file (a sample opened in the browser) is kept as it was:
its sort, filter, cursor and findings. esc in the browser (nothing else to clear) or D inside
its folder brings it back; D on another folder, or leaving the view by esc or q, drops it.

The view installs itself under dataset.KEPT before it goes (Textual keeps an installed screen
when it is popped); this module finds it, pushes it again and drops it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.screen import Screen

from eagle3_tui.target import Target

if TYPE_CHECKING:
    from eagle3_tui.ui.dataset.screen import DatasetScreen


def kept(app: App[Any]) -> DatasetScreen | None:
    # lazy: the main screen imports this module; the dataset view loads only when D opens it
    from eagle3_tui.ui.dataset.screen import KEPT, DatasetScreen

    view = app.get_screen(KEPT) if app.is_screen_installed(KEPT) else None
    return view if isinstance(view, DatasetScreen) else None


def back_to(app: App[Any], data: Target | None, closed: Callable[[str | None], None]) -> bool:
    """esc (data None) or D on `data` inside the kept view's folder: push it again; D elsewhere
    drops it (the caller scans anew). False: nothing was pushed."""
    view = kept(app)
    if view is None:
        return False
    root = view.folder
    under = (posixpath.normpath(data.path).rstrip("/") + "/").startswith(
        posixpath.normpath(root.path).rstrip("/") + "/") if data is not None else True
    if data is not None and (data.place != root.place or not under):
        drop(app, view)
        return False
    app.push_screen(view, callback=closed)
    return True


def closed(screen: Screen[Any], opened: str | None) -> None:
    """The view went: by enter on a file (`opened`: it is kept), else by esc or q (dropped once
    it is off the stack)."""
    view = kept(screen.app)
    if opened is None and view is not None:
        screen.call_after_refresh(drop, screen.app, view)


def drop(app: App[Any], view: Screen[Any]) -> None:
    if view in app.screen_stack:
        return
    app.uninstall_screen(view)
    if view.is_attached:
        view.remove()  # its workers (a scan still running) stop with it
