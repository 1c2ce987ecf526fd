"""The eagle3-tui Textual application: app-wide keys, the host-key dialog, and the screens."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from eagle3_tui.ui.commands import Eagle3Commands
from eagle3_tui.ui.connect import Opened, open_target
from eagle3_tui.ui.screens.help import HelpScreen
from eagle3_tui.ui.screens.hostkey import HostKeyScreen
from eagle3_tui.ui.screens.main import MainScreen

Opener = Callable[..., Awaitable[Opened]]


class Eagle3App(App):
    CSS_PATH = "app.tcss"
    TITLE = "eagle3-tui"
    COMMANDS = App.COMMANDS | {Eagle3Commands}
    BINDINGS = [
        Binding("question_mark,f1", "help", "Help", key_display="?", id="app.help",
                tooltip="This list of keys"),
        Binding("n", "step_sample(1)", "Next", id="app.next_sample",
                tooltip="Next sample file in this folder (from anywhere)"),
        Binding("p", "step_sample(-1)", "Prev", id="app.prev_sample",
                tooltip="Previous sample file in this folder (from anywhere)"),
        Binding("r", "reload", "Reload", show=False, id="app.reload",
                tooltip="Reload the folder and the sample shown"),
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit"),
    ]

    def __init__(
        self,
        target: str = ".",
        *,
        remote_python: str | None = None,
        accept_new_host_key: bool = False,
        opener: Opener = open_target,
    ) -> None:
        super().__init__()
        self.target = target
        self.remote_python = remote_python
        self.accept_new_host_key = accept_new_host_key
        #: turns the target into an open Source; tests pass their own (e.g. a counting source)
        self.opener = opener

    def get_default_screen(self) -> Screen:
        return MainScreen()

    @property
    def main_screen(self) -> MainScreen:
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        raise LookupError("main screen is not open")

    async def confirm_host_key(self, prompt: Any) -> bool:
        """Ask the user whether to trust a host key seen for the first time."""
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def done(result: bool | None) -> None:
            if not answer.done():
                answer.set_result(bool(result))

        self.push_screen(HostKeyScreen(prompt), callback=done)
        return await answer

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_step_sample(self, step: int) -> None:
        self.main_screen.step_sample(step)

    def action_reload(self) -> None:
        self.main_screen.reload()

    async def on_unmount(self) -> None:
        try:
            main = self.main_screen
        except LookupError:
            return
        main.bookmarking.close()
        source = main.source
        if source is not None:
            try:
                await source.close()
            except Exception:  # noqa: BLE001 - closing a dead connection must not block quitting
                pass
