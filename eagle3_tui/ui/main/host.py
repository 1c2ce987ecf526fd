"""What the main screen and its parts need of the app and of the screen, as Protocols: the app
is never imported below it (ui/app.py opens the main screen)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from eagle3_tui.ui.dataset.source import RayHost

if TYPE_CHECKING:
    from textual.app import App
    from textual.message import Message
    from textual.worker import Worker

    from eagle3_tui.sources.base import Source
    from eagle3_tui.target import Target
    from eagle3_tui.ui.sample.pane import SamplePane
    from eagle3_tui.ui.shared.status import StatusLine
    from eagle3_tui.ui.start.analysis import Analysis
    from eagle3_tui.ui.start.connect import Opened


class Host(RayHost, Protocol):
    """What the main screen needs of the app: how to open a target, and where bookmarks live."""

    opener: Callable[..., Awaitable[Opened]]
    remote_python: str | None
    accept_new_host_key: bool
    data_dir: str | None
    analysis: Analysis

    async def confirm_host_key(self, prompt: Any) -> bool: ...


class Parts(Protocol):
    """The main screen as its parts (the exporter, the text opener, P's pairing) see it."""

    source: Source | None
    target: Target | None
    where: str

    @property
    def app(self) -> App[object]: ...

    @property
    def pane(self) -> SamplePane: ...

    @property
    def status_line(self) -> StatusLine: ...

    def run_worker(self, work: Awaitable[None], name: str | None = "", group: str = "default",
                   description: str = "", exit_on_error: bool = True, start: bool = True,
                   exclusive: bool = False, thread: bool = False) -> Worker[None]: ...

    def post_message(self, message: Message) -> bool: ...
