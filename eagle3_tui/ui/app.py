"""The eagle3-tui Textual application: app-wide keys, the host-key dialog, and the screens.

Screens do not import the app: the main screen reads what it needs through a narrow interface
(its `Host` protocol), and other screens post messages that bubble here (PinsSwapped)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from textual.app import App
from textual.binding import BindingType
from textual.screen import Screen

from eagle3_tui.sources.base import Source
from eagle3_tui.ui import keys
from eagle3_tui.ui.compare.messages import PinsSwapped
from eagle3_tui.ui.dataset.source import RayOptions
from eagle3_tui.ui.main.screen import MainScreen
from eagle3_tui.ui.start.analysis import Analysis
from eagle3_tui.ui.start.connect import Opened, open_target

Opener = Callable[..., Awaitable[Opened]]


def _palette_provider():
    # lazy: imported when the palette first opens: textual.command costs ~80 ms at start-up
    from eagle3_tui.ui.palette import Eagle3Commands

    return Eagle3Commands


def _settle_collector() -> None:
    """After the first frame: what exists now (modules, classes, the screens) lives as long as
    the app. Frozen out of the collector, a full collection walks only what came later (it was
    40-60 ms with the GIL held, in the middle of the first folder's listing). The start-up's
    own garbage is collected first, so it is not frozen with the rest; the collector, off
    since `eagle3-tui` started (commands/tui.py), goes back on."""
    gc.collect()
    gc.freeze()
    gc.enable()


class Eagle3App(App):
    CSS_PATH = "app.tcss"
    TITLE = "eagle3-tui"
    COMMANDS = App.COMMANDS | {_palette_provider}
    BINDINGS: ClassVar[list[BindingType]] = [*keys.APP]

    def __init__(
        self,
        target: str = ".",
        *,
        remote_python: str | None = None,
        accept_new_host_key: bool = False,
        opener: Opener = open_target,
        data_dir: str | None = None,
        analysis: Analysis | None = None,
        ray: RayOptions | None = None,
    ) -> None:
        super().__init__()
        #: --ray: the dataset view's scans run on this Ray cluster (ui/dataset/source.py)
        self.ray = ray
        self.ray_source: Source | None = None  # made on the first such scan
        #: tokenizer, target model and drafter given on the command line (all optional)
        self.analysis = analysis or Analysis()
        #: where bookmarks live (None: the user data folder, or EAGLE3_TUI_DATA_DIR)
        self.data_dir = data_dir
        #: the target given on the command line; the main screen parses it and owns what is open
        self.start_target = target
        self.remote_python = remote_python
        self.accept_new_host_key = accept_new_host_key
        #: turns the target into an open Source; tests pass their own (e.g. a counting source)
        self.opener = opener

    def on_mount(self) -> None:
        self.call_after_refresh(_settle_collector)

    def get_default_screen(self) -> Screen:
        return MainScreen(self.start_target, data_dir=self.data_dir)

    @property
    def main_screen(self) -> MainScreen:
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        raise LookupError("main screen is not open")

    async def confirm_host_key(self, prompt: Any) -> bool:
        """Ask the user whether to trust a host key seen for the first time."""
        from eagle3_tui.ui.start.hostkey import HostKeyScreen  # lazy: a screen only an unknown host shows

        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def done(result: bool | None) -> None:
            if not answer.done():
                answer.set_result(bool(result))

        self.push_screen(HostKeyScreen(prompt), callback=done)
        return await answer

    def action_help(self) -> None:
        from eagle3_tui.ui.help import HelpScreen  # lazy: a screen opened only on ?

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_step_sample(self, step: int) -> None:
        self.main_screen.step_sample(step)

    def action_reload(self) -> None:
        self.main_screen.reload()

    def on_pins_swapped(self, message: PinsSwapped) -> None:
        """The compare view swapped its sides; the browser's pins follow."""
        self.main_screen.swap_pins()

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
