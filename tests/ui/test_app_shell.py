"""Help, palette, host-key dialog, start-up cost and the TUI command line."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from textual.command import CommandPalette

from eagle3_tui.commands.tui import build_parser
from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.help import HelpScreen, key_text
from eagle3_tui.ui.start.hostkey import HostKeyScreen
from eagle3_tui.ui.main.screen import MainScreen
from eagle3_tui.ui.browser.browser import BrowserList
from tests.helpers.tui import WAIT_SECONDS, make_app, screen_text, wait_until

REPO = Path(__file__).resolve().parents[2]


async def test_help_lists_every_key_and_closes(tree):
    app = make_app(tree)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        # every page of the list (it scrolls once the keys outgrow one screen)
        body, pages = app.screen.query_one("#help-body"), []
        for y in range(0, int(body.max_scroll_y) + body.size.height, max(1, body.size.height - 2)):
            body.scroll_to(y=y, animate=False)
            await pilot.pause()
            pages.append(" ".join(screen_text(app).split()))
        help_text = " ".join(pages)
        for bindings in (Eagle3App.BINDINGS, MainScreen.BINDINGS, BrowserList.BINDINGS):
            for b in bindings:
                assert f"{key_text(b.key)} {b.tooltip}" in help_text, b.key
        assert "ctrl+p Command palette" in help_text
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("question_mark")
        assert isinstance(app.screen, MainScreen)


async def test_help_fits_a_small_terminal(tree):
    app = make_app(tree)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f1")
        text = screen_text(app)
        assert "Keys" in text and "Anywhere" in text  # the dialog scrolls, its top is visible


async def test_palette_runs_the_apps_own_actions(tree):
    app = make_app(tree / "rows_0-2000")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"next sample")
        await wait_until(pilot, lambda: "Next sample file" in screen_text(app), what="hit")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), what="palette closed")
        assert app.main_screen.browser.current.name == "data_1.ckpt"


@dataclass
class Prompt:
    host: str = "gpu-box"
    port: int = 2222
    algorithm: str = "ssh-ed25519"
    fingerprint_sha256: str = "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"
    known_hosts_line: str = "[gpu-box]:2222 ssh-ed25519 AAAA..."


async def _answer_dialog(tree, keys: tuple[str, ...]) -> tuple[bool, str]:
    """Run the app's own confirm_host_key as the SSH source would, answer with `keys`."""
    app = make_app(tree)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
        task = app.run_worker(app.confirm_host_key(Prompt()))
        await wait_until(pilot, lambda: isinstance(app.screen, HostKeyScreen)
                         and "fingerprint" in screen_text(app), what="dialog")
        shown = " ".join(screen_text(app).split())
        await pilot.press(*keys)
        await app.workers.wait_for_complete([task])
        assert isinstance(app.screen, MainScreen)
        return task.result, shown


async def test_host_key_dialog_shows_fingerprint_and_accepts(tree):
    answer, shown = await _answer_dialog(tree, ("y",))
    assert answer is True
    assert "[gpu-box]:2222" in shown
    assert "ssh-ed25519" in shown
    assert "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU" in shown


async def test_host_key_dialog_declines_by_default(tree):
    answer, _ = await _answer_dialog(tree, ("enter",))  # the focused button is No
    assert answer is False
    answer, _ = await _answer_dialog(tree, ("escape",))
    assert answer is False


def test_starting_the_app_does_not_import_torch(tree):
    # the tree's top holds folders only: nothing asks for a sample to be summarised
    code = (
        "import asyncio, sys\n"
        "from eagle3_tui.commands.tui import build_parser\n"
        "from eagle3_tui.ui.app import Eagle3App\n"
        "async def main():\n"
        f"    app = Eagle3App({str(tree)!r})\n"
        "    async with app.run_test(size=(80, 24)) as pilot:\n"
        "        while not app.main_screen.listing_done:\n"
        "            await pilot.pause(0.02)\n"
        "        assert len(app.main_screen.browser.entries) == 6\n"
        "        await pilot.press('j', 'j', 'slash', 'r', 'escape', 'question_mark')\n"
        "asyncio.run(main())\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, timeout=WAIT_SECONDS)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("NO-TORCH")


def test_command_line_defaults_and_flags():
    args = build_parser().parse_args([])
    assert args.target == "." and args.remote_python is None and not args.accept_new_host_key
    args = build_parser().parse_args(["gpu:/data", "--remote-python", "/opt/py/bin/python",
                                      "--accept-new-host-key", "--data-dir", "/tmp/d"])
    assert (args.target, args.remote_python, args.accept_new_host_key, args.data_dir) == (
        "gpu:/data", "/opt/py/bin/python", True, "/tmp/d")
