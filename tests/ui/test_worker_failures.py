"""Every TUI worker reports a failure as a message the user sees and never leaves its caller
waiting: an exception that is not a SourceError (a bug, an odd library error) must not close
the app (Textual exits on an unhandled worker error) nor leave a view "loading" for ever."""

from __future__ import annotations

import ast
from pathlib import Path

import eagle3_tui.ui
from eagle3_tui.sources.local import LocalSource
from tests.helpers.tui import make_app, screen_text, wait_until

# worker bodies that hand every failure to a function that turns it into a result
_DELEGATES = {"run_accept"}


class BrokenListing(LocalSource):
    """Lists the first page of a folder named "broken", then fails as a bug would."""

    async def list_pages(self, path, page_size):
        async for page in super().list_pages(path, page_size):
            yield page
            if path.rstrip("/").endswith("broken"):
                raise RuntimeError("listing went wrong")


async def test_a_listing_that_fails_oddly_is_said_and_the_app_keeps_running(tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "a.txt").write_text("x")
    (tmp_path / "fine").mkdir()
    app = make_app(tmp_path, source=BrokenListing())
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.listing_done, what="first listing")
        await pilot.press("enter")  # into broken/
        await wait_until(pilot, lambda: main.listing_done and main.folder.listing_error,
                         what="the listing's end")
        await pilot.pause()
        toasts = " ".join(n.message for n in app._notifications)  # the toast wraps the message
        assert "the listing stopped after 1 entries: listing failed: RuntimeError: listing went wrong" in toasts
        assert "a.txt" in screen_text(app)  # what was listed stays shown
        await pilot.press("h")  # the app still answers keys
        await wait_until(pilot, lambda: main.listing_done and main.browser.current is not None,
                         what="back up")
        assert app.is_running


def _worker_functions():
    root = Path(eagle3_tui.ui.__file__).parent
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    "work" in ast.unparse(d) for d in node.decorator_list):
                yield path.relative_to(root), node


def _catches_everything(fn) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Try) and any(
                h.type is None or ast.unparse(h.type) in ("Exception", "BaseException") for h in node.handlers):
            return True
        if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in _DELEGATES:
            return True
    return False


def _callees_catch(fn, module) -> bool:
    """The worker awaits a module-level function that itself catches everything."""
    tree = ast.parse(module)
    defined = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return any(isinstance(c, ast.Call) and ast.unparse(c.func).split(".")[-1] in defined
               and _catches_everything(defined[ast.unparse(c.func).split(".")[-1]]) for c in ast.walk(fn))


def test_every_worker_turns_any_exception_into_a_message():
    root = Path(eagle3_tui.ui.__file__).parent
    listing = (root / "browser" / "listing_stream.py").read_text()
    found = list(_worker_functions())
    assert len(found) >= 10
    bare = [f"{path}:{fn.lineno} {fn.name}" for path, fn in found
            if not (_catches_everything(fn) or _callees_catch(fn, listing))]
    assert bare == []
