"""Opening the main screen's target: the connection runs in a worker and posts SourceReady or
SourceFailed to the screen; switching to another target closes the old Source first."""

from __future__ import annotations

import posixpath
from typing import cast

from eagle3_tui.sources.base import Source, SourceError
from eagle3_tui.target import Target, TargetError, parse_target
from eagle3_tui.ui.browser.paths import parent_folder
from eagle3_tui.ui.main.host import Host, Parts
from eagle3_tui.ui.main.messages import SourceFailed, SourceReady
from eagle3_tui.ui.shared.messages import StatusMessage


class Connecting:
    def __init__(self, screen: Parts, target: str) -> None:
        self.screen = screen
        #: the target as given, and why it did not parse (then the screen's target is None)
        self.text = target
        self.error: str | None = None

    def parse(self) -> Target | None:
        try:
            return parse_target(self.text)
        except TargetError as err:
            self.error = str(err)
            return None

    def label(self) -> str:
        target = self.screen.target
        return target.display() if target is not None else self.text

    def connect(self) -> None:
        self.screen.run_worker(self._connect(), name="connect", group="connect", exclusive=True)

    def close_then_connect(self, old: Source | None) -> None:
        self.screen.run_worker(self._close_then_connect(old), name="_close_then_connect", group="switch")

    async def _connect(self) -> None:
        screen, target = self.screen, self.screen.target
        app = cast("Host", screen.app)  # the Eagle3App, which the screens do not import
        if target is None:
            screen.post_message(SourceFailed(self.error or "no target"))
            return
        try:
            opened = await app.opener(
                target.display(),
                remote_python=app.remote_python,
                accept_new_host_key=app.accept_new_host_key,
                confirm_host_key=app.confirm_host_key,
                on_status=lambda text: screen.post_message(StatusMessage(text)),
            )
            path, select = opened.path, None
            entry = await opened.source.stat(path)
            if entry.kind == "file":  # a file target: open its folder with the cursor on it
                path, select = parent_folder(path), posixpath.basename(path)
        except SourceError as err:
            screen.post_message(SourceFailed(str(err)))
            return
        except Exception as err:  # noqa: BLE001 - any failure to connect is shown, not raised
            screen.post_message(SourceFailed(f"{type(err).__name__}: {err}"))
            return
        screen.post_message(SourceReady(opened.source, target.with_path(path), opened.where, select))

    async def _close_then_connect(self, old: Source | None) -> None:
        if old is not None:
            try:
                await old.close()
            except Exception:  # noqa: BLE001 - a dead connection must not keep us from the new one
                pass
        self.connect()
