"""File names with control characters never reach the terminal raw (issue 10, item 5).

Checked on what the terminal receives: the escape sequence Textual would write for a full
redraw of the screen (the same bytes the real driver writes), and for the real app in a pty.
A raw ESC in a name recolours or clears the screen; a raw CR/LF splits a row and the panel
borders vanish. Each place that shows a name must show its escaped form instead.
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eagle3_tui.ui.bookmarks.screen import BookmarksScreen
from eagle3_tui.ui.compare.screen import CompareScreen
from tests.helpers.tree import write_specforge
from tests.helpers.tui import WAIT_SECONDS, make_app, screen_text, wait_until

ESC_NAME = "c\x1b[31mred\x1b[0m.ckpt"
CRLF_NAME = "b_new\r\nline.ckpt"
DIR_NAME = "d\x1b[2Jir"  # ESC [2J clears the whole screen
ESCAPED = {
    ESC_NAME: "c\\x1b[31mred\\x1b[0m.ckpt",
    CRLF_NAME: "b_new\\r\\nline.ckpt",
    DIR_NAME: "d\\x1b[2Jir",
}
RAW_PIECES = ["c\x1b[31mred", "\x1b[0m.ckpt", "b_new\r", "\nline.ckpt", "\x1b[2J"]


def terminal_output(app) -> str:
    """The characters the driver would write to the terminal to draw the current screen."""
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    return update.render_segments(app.console)


def assert_safe(out: str, *names: str) -> None:
    for piece in RAW_PIECES:
        assert piece not in out, f"raw {piece!r} from a file name reached the terminal"
    for name in names:
        assert ESCAPED[name] in out, f"{ESCAPED[name]} not shown"


def assert_rows_aligned(app, width: int) -> None:
    lines = screen_text(app).splitlines()
    assert all(len(line) == width for line in lines)
    # the browser panel's right border sits in one column on every row
    border = lines[1].index("╮")
    assert all(line[border] in "│╮╯" for line in lines[1:-2])


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile") / DIR_NAME
    write_specforge(folder / ESC_NAME, tokens=16, hidden=16, seed=1)
    write_specforge(folder / CRLF_NAME, tokens=16, hidden=16, seed=1)
    return folder


def copy_of(hostile: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(hostile, tmp_path / DIR_NAME))


async def test_browser_path_bar_titles_status_and_sample_header(hostile, monkeypatch, tmp_path):
    monkeypatch.setenv("EAGLE3_TUI_DATA_DIR", str(tmp_path / "data"))
    app = make_app(hostile)
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.listing_done, what="listing")
        assert [e.name for e in main.browser.rows] == [CRLF_NAME, ESC_NAME]
        await pilot.press("j")  # onto the ESC name: panel title, header path, status line
        await wait_until(pilot, lambda: main.shown == str(hostile / ESC_NAME)
                         and main.sample.loading_name is None, what="summary")
        out = terminal_output(app)
        assert_safe(out, ESC_NAME, CRLF_NAME, DIR_NAME)
        assert f"─ {ESCAPED[ESC_NAME]} ─" in screen_text(app)  # the sample panel's title
        assert f"─ {ESCAPED[DIR_NAME]} ─" in screen_text(app)  # the browser panel's title
        assert ESCAPED[DIR_NAME] in screen_text(app).splitlines()[0]  # the path bar
        assert_rows_aligned(app, 120)


async def test_compare_header_and_pins_bar(hostile, monkeypatch, tmp_path):
    monkeypatch.setenv("EAGLE3_TUI_DATA_DIR", str(tmp_path / "data"))
    app = make_app(hostile)
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.listing_done, what="listing")
        await pilot.press("j", "t")  # A: the ESC name
        assert_safe(terminal_output(app), ESC_NAME)  # the pins bar and the status line
        await pilot.press("k", "c")  # B: the CR/LF name
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen)
                         and app.screen.result is not None, what="comparison")
        assert_safe(terminal_output(app), ESC_NAME, CRLF_NAME, DIR_NAME)


async def test_bookmarks_list_and_the_gone_file_toast(hostile, monkeypatch, tmp_path):
    monkeypatch.setenv("EAGLE3_TUI_DATA_DIR", str(tmp_path / "data"))
    folder = copy_of(hostile, tmp_path)
    app = make_app(folder)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.listing_done, what="listing")
        await pilot.press("b", "j", "b")  # bookmark both files
        assert_safe(terminal_output(app), ESC_NAME)  # the "bookmarked ..." status line
        await pilot.press("B")
        await wait_until(pilot, lambda: isinstance(app.screen, BookmarksScreen), what="list")
        await pilot.pause()
        assert_safe(terminal_output(app), ESC_NAME, DIR_NAME)
        await pilot.press("escape")
        (folder / CRLF_NAME).unlink()
        key = next(k for k in main.bookmarking.store().keys() if k.endswith(CRLF_NAME))
        main.bookmarking.jump(key)  # the bookmarked file is gone: a toast says so
        await wait_until(pilot, lambda: "Bookmarked file gone" in screen_text(app), what="toast")
        out = terminal_output(app)
        assert_safe(out, CRLF_NAME)


def test_summary_header_escapes_the_path(hostile):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-m", "eagle3_tui", "summary", str(hostile / ESC_NAME)],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "\x1b" not in out and "\r" not in out
    header = out.splitlines()[0]
    assert header.endswith(f"{ESCAPED[DIR_NAME]}/{ESCAPED[ESC_NAME]}")


def _exited(pid: int, fd: int) -> str | None:
    """Wait for the child to end after q (draining its terminal so it can write): "exited", or None
    after WAIT_SECONDS (the caller kills it)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return "exited"
        if select.select([fd], [], [], 0.1)[0]:
            try:
                os.read(fd, 65536)
            except OSError:  # the child closed the terminal; it is reaped on the next turn
                pass
    return None


def test_real_app_in_a_pty_receives_no_raw_name(hostile, tmp_path):
    """The real program on a real terminal device: its bytes as a terminal reads them."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40",
           "EAGLE3_TUI_DATA_DIR": str(tmp_path / "data")}
    pid, fd = pty.fork()
    if pid == 0:  # the child: the app, with the pty as its terminal
        os.execvpe(sys.executable, [sys.executable, "-m", "eagle3_tui", str(hostile)], env)
    received, ended, start = b"", None, time.monotonic()
    wants = [ESCAPED[CRLF_NAME].encode(), ESCAPED[ESC_NAME].encode()]
    try:
        while not all(w in received for w in wants) and time.monotonic() - start < WAIT_SECONDS:
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    received += os.read(fd, 65536)
                except OSError:  # the child closed the terminal
                    break
            if ended is None and os.waitpid(pid, os.WNOHANG)[0] == pid:
                ended = "exited"  # reaped here; its last bytes may still be in the pty
        if ended is None:
            os.write(fd, b"q")
            ended = _exited(pid, fd)
    finally:
        if ended is None:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
    text = received.decode(errors="replace")
    assert all(w in received for w in wants), (
        f"names not drawn after {time.monotonic() - start:.1f} s (app {ended or 'still running'}); "
        f"last bytes: {text[-1500:]!r}")
    for piece in RAW_PIECES:
        assert piece not in text, f"raw {piece!r} reached the terminal"
