"""The TUI on an SSH target, against asyncssh's real server in the test's event loop."""

from __future__ import annotations

import functools

from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.main.screen import MainScreen
from eagle3_tui.ui.start.connect import open_target
from eagle3_tui.ui.start.hostkey import HostKeyScreen
from tests.helpers.ssh_servers import write_client_files
from tests.helpers.tui import screen_text, wait_until
from tests.helpers.warm_cli import warm_box_python


def remote_app(box, tmp_path, target: str, *, trusted: bool = True, **app_options) -> tuple[Eagle3App, str]:
    config, known = write_client_files(tmp_path / "client", "box", box.port, box.keys,
                                       trusted=trusted)
    opener = functools.partial(open_target, ssh_config=config, known_hosts=known)
    return Eagle3App(target, remote_python=warm_box_python(), opener=opener, **app_options), known


async def test_remote_folder_lists_in_natural_order_and_summarises_remotely(box, tree, tmp_path):
    app, _ = remote_app(box, tmp_path, f"box:{tree / 'rows_0-2000'}")
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        # the first frame does not wait for the network
        assert isinstance(app.screen, MainScreen)
        await wait_until(pilot, lambda: main.listing_done, what="remote listing")
        assert [e.name for e in main.browser.rows] == [
            f"data_{i}.ckpt" for i in (0, 1, 2, 10, 11, 12, 13)]
        first_line = screen_text(app).splitlines()[0]
        assert " box " in first_line and str(tree / "rows_0-2000") in first_line
        await pilot.press("j", "j")
        await wait_until(pilot, lambda: (main.sample.summary or {}).get("path", "").endswith(
            "data_2.ckpt"), what="remote summary")
        text = screen_text(app)
        assert "computed remote" in text and "T 48 · valid 42" in text


async def test_unknown_host_key_accepted_in_the_dialog(box, tree, tmp_path):
    app, known = remote_app(box, tmp_path, f"box:{tree}", trusted=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HostKeyScreen)
                         and "fingerprint" in screen_text(app), what="dialog")
        text = " ".join(screen_text(app).split())
        # a non-default port: the host as known_hosts would name it, port and all
        assert f"[127.0.0.1]:{box.port} is not in your known_hosts file" in text
        assert "ssh-ed25519" in text and "SHA256:" in text
        await pilot.press("y")
        await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
        assert "rows_0-2000" in [e.name for e in app.main_screen.browser.rows]
        # remembered for next time, under the name OpenSSH gives a host on a non-default port
        assert open(known).read().startswith(f"[127.0.0.1]:{box.port} ssh-ed25519 ")


async def test_declined_host_key_is_shown_and_the_app_keeps_working(box, tree, tmp_path):
    app, known = remote_app(box, tmp_path, f"box:{tree}", trusted=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HostKeyScreen)
                         and "fingerprint" in screen_text(app), what="dialog")
        await pilot.press("n")
        browser = app.main_screen.browser
        await wait_until(pilot, lambda: browser.message and "host key" in browser.message[0].lower(), what="refusal message")
        assert open(known).read() == ""
        await pilot.press("question_mark")
        assert app.screen.__class__.__name__ == "HelpScreen"
