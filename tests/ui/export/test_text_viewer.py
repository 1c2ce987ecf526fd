"""enter / l on a text file (the demo's README.txt, model/config.json) opens a read-only viewer
(j/k/g/G scroll, esc back) instead of "not a torch file", locally and on an SSH box through the
same Source; binary garbage still reads as a file that is not a torch file."""

from __future__ import annotations

import json
import os

import pytest

from eagle3_tui.ui.main.screen import MainScreen
from tests.helpers.compare_view import go_to, started
from tests.helpers.tui import make_app, screen_text, wait_until
from tests.ui.test_remote import remote_app

SIZES = [(120, 40), (80, 24)]


def viewing(app) -> bool:
    """The text viewer is the screen shown (by name: the test must fail, not error, without it)."""
    return type(app.screen).__name__ == "TextViewScreen"


async def open_text(pilot, folder, name: str):
    await go_to(pilot, folder, name)
    await pilot.press("l")
    await wait_until(pilot, lambda: viewing(pilot.app),
                     what=f"the text viewer on {name}")
    return pilot.app.screen


@pytest.mark.parametrize("size", SIZES)
async def test_readme_and_config_open_as_text(demo, size):
    readme = (demo / "README.txt").read_text().splitlines()
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        await started(pilot)
        await go_to(pilot, demo, "README.txt")
        hint = "l views text, else tries it as a sample" if size[0] >= 100 else "l views text"
        await wait_until(pilot, lambda: hint in screen_text(app), what="the panel's hint")
        view = await open_text(pilot, demo, "README.txt")
        text = screen_text(app)
        assert readme[0] in text and "README.txt" in text and "read-only" in text
        assert "not a torch" not in text
        body = view.body
        assert body.max_scroll_y > 0, "the demo's README is longer than one screen"
        await pilot.press("j", "j")
        await wait_until(pilot, lambda: body.scroll_y == 2, what="two lines down")
        await pilot.press("k")
        await wait_until(pilot, lambda: body.scroll_y == 1, what="one line up")
        await pilot.press("G")
        await wait_until(pilot, lambda: body.scroll_y == body.max_scroll_y, what="the end")
        last = next(line for line in reversed(readme) if line.strip())
        assert last.strip()[:40] in screen_text(app)
        await pilot.press("g")
        assert body.scroll_y == 0 and readme[0] in screen_text(app)
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        assert app.main_screen.browser.current.name == "README.txt"

        config = json.loads((demo / "model" / "config.json").read_text())
        await open_text(pilot, demo / "model", "config.json")
        assert '"hidden_size"' in screen_text(app) and "config.json" in screen_text(app)
        assert config["hidden_size"] == 64


async def test_binary_garbage_still_says_not_a_torch_file(tmp_path):
    (tmp_path / "junk.bin").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "notes.md").write_text("# notes\n\nslot 2 looks off ✓\n")
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await go_to(pilot, tmp_path, "junk.bin")
        await pilot.press("l")
        main = app.main_screen
        await wait_until(pilot, lambda: (main.sample.summary or {}).get("error"), what="the loader's verdict")
        assert isinstance(app.screen, MainScreen)
        assert "not a torch" in main.sample.summary["error"]
        await open_text(pilot, tmp_path, "notes.md")
        assert "slot 2 looks off ✓" in screen_text(app)


async def test_a_long_text_file_says_it_is_cut(tmp_path):
    from eagle3_tui.sources.text_head import TEXT_LIMIT

    line = "0123456789 abcdefghij\n"
    (tmp_path / "log.txt").write_text(line * (2 * TEXT_LIMIT // len(line)))
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        view = await open_text(pilot, tmp_path, "log.txt")
        assert view.truncated and len(view.text.encode()) <= TEXT_LIMIT
        assert "truncated" in screen_text(app)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
async def test_a_fifo_is_never_opened(tmp_path):
    os.mkfifo(tmp_path / "pipe.txt")
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await go_to(pilot, tmp_path, "pipe.txt")
        await pilot.press("l")
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert isinstance(app.screen, MainScreen)


@pytest.mark.parametrize("size", SIZES)
async def test_text_files_open_over_ssh(box, demo, tmp_path, size):
    readme = (demo / "README.txt").read_text().splitlines()
    app, _ = remote_app(box, tmp_path, f"box:{demo}")
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.listing_done, what="remote listing")
        main.debounce_seconds = 600
        await open_text(pilot, demo, "README.txt")
        text = screen_text(app)
        assert readme[0] in text and " box" in text
        await pilot.press("escape")
        await open_text(pilot, demo / "model", "config.json")
        assert '"hidden_size"' in screen_text(app)
