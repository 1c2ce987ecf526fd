"""The TUI shows a hostile file's one-line error; the CLI's usage errors, help and bookmarks."""

from __future__ import annotations

import sys

from tests.helpers import warm_cli
from tests.helpers.tui import make_app, screen_text, wait_until
from tests.hostile import files as F


async def test_sample_panel_shows_the_one_line_error(tmp_path):
    F.st_metadata_list(tmp_path / "data_0.safetensors")
    F.fifo(tmp_path / "data_1.pt")
    app = make_app(tmp_path / "data_0.safetensors")
    async with app.run_test(size=(120, 40)) as pilot:
        summary = lambda: app.main_screen.sample.summary or {}  # noqa: E731
        await wait_until(pilot, lambda: summary().get("path", "").endswith("data_0.safetensors"), what="first")
        text = screen_text(app)
        assert "__metadata__ is a list, not an object" in text
        assert "AttributeError" not in text and "Traceback" not in text
        # the browser never asks for a summary of the FIFO next to it: the app stays responsive
        await pilot.press("j", "enter")
        await wait_until(pilot, lambda: "data_1.pt: a dead link or special file" in screen_text(app), what="fifo")


def _cli(*args, **kw):
    return warm_cli.run([sys.executable, "-m", "eagle3_tui", *args], capture_output=True, text=True,
                        timeout=120, **kw)


def test_top_level_help_shows_the_tui_arguments():
    out = _cli("--help")
    assert out.returncode == 0
    for word in ("TARGET", "--remote-python", "--accept-new-host-key", "--data-dir", "summary", "compare"):
        assert word in out.stdout, word


def test_bookmarking_a_missing_local_path_needs_force(tmp_path):
    missing = str(tmp_path / "typo.pt")
    data = ["--data-dir", str(tmp_path / "store")]
    out = _cli("bookmarks", "add", missing, *data)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        f"eagle3-tui bookmarks: {missing}: no such file or folder; not bookmarked (--force bookmarks it anyway)"]
    assert _cli("bookmarks", "list", *data).stdout == ""
    out = _cli("bookmarks", "add", "--force", missing, *data)
    assert out.returncode == 0, out.stderr
    assert _cli("bookmarks", "list", *data).stdout.startswith(missing)
