"""Driving the TUI in tests: an app on a real LocalSource (counting its summaries, or given
--drafter, --model or --tokenizer), waiting for what it posts, keys as a terminal sends them,
and the characters on screen."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from time import monotonic

from eagle3_tui.sources.local import LocalSource
from eagle3_tui.ui.start.analysis import Analysis
from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.start.connect import Opened


#: The one ceiling of every wait in the TUI tests (wait_until, the tmux terminal's wait_for, Textual's
#: own wait after each key). A wait ends on its event; this is only how long a test that will
#: never see it goes on: long enough for a 2-core machine at load 7 (a 15 s ceiling failed there).
WAIT_SECONDS = float(os.environ.get("EAGLE3_TUI_TEST_WAIT", "240"))


class CountingSource(LocalSource):
    """The real local source, recording which files were summarised (to prove the debounce)."""

    def __init__(self) -> None:
        super().__init__()
        self.summarized: list[str] = []

    def runtime(self):
        """This machine's runtime with fixed version numbers: the header shows them, and a
        snapshot must not change with the Python or torch of the machine that runs the tests."""
        return {**super().runtime(), "python": "3.11.7", "torch": "2.13.0+cpu"}

    async def summarize(self, path, **kwargs):
        self.summarized.append(path)
        return await super().summarize(path, **kwargs)


def make_app(target: str | Path, source: LocalSource | None = None) -> Eagle3App:
    source = source or CountingSource()

    async def opener(text, **_kwargs):
        return Opened(source, str(Path(text).resolve()), "local")

    app = Eagle3App(str(target), opener=opener)
    app.test_source = source  # type: ignore[attr-defined]
    return app


class WatchedSource(LocalSource):
    """The real local source, recording which drafter runs started and which were cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.accepted: list[str] = []
        self.cancelled: list[str] = []

    async def accept(self, path, drafter, **kw):
        self.accepted.append(path)
        try:
            return await super().accept(path, drafter, **kw)
        except asyncio.CancelledError:
            self.cancelled.append(path)
            raise


def make_drafter_app(target, drafter: str | None, source: LocalSource | None = None) -> Eagle3App:
    """The app given --drafter, on a WatchedSource unless told otherwise."""
    source = source or WatchedSource()

    async def opener(text, **_kwargs):
        return Opened(source, str(Path(text).resolve()), "local")

    app = Eagle3App(str(target), opener=opener, analysis=Analysis.from_options(drafter=drafter))
    app.test_source = source  # type: ignore[attr-defined]
    return app


def make_model_app(target: Path, model: str | None) -> Eagle3App:
    """The app given --model."""
    source = LocalSource()

    async def opener(text, **_kwargs):
        return Opened(source, str(Path(text).resolve()), "local")

    return Eagle3App(str(target), opener=opener, analysis=Analysis(model=model))


def text_app(target: Path, tokenizer: Path | None, data_dir: Path, **options) -> Eagle3App:
    """The app given --tokenizer (and other analysis options), bookmarks in `data_dir`."""
    source = LocalSource()

    async def opener(text, **_kwargs):
        return Opened(source, str(Path(text).resolve()), "local")

    return Eagle3App(str(target), opener=opener, data_dir=str(data_dir),
                     analysis=Analysis.from_options(str(tokenizer) if tokenizer else None, **options))


async def wait_until(pilot, condition, timeout: float | None = None, what: str = "condition") -> None:
    """Let the app run until `condition()` holds (the app's workers post their messages), at most
    WAIT_SECONDS; a caller's `timeout` can raise that ceiling, never lower it (a short one is a
    test that fails on a loaded machine)."""
    ceiling = max(timeout or 0.0, WAIT_SECONDS)
    deadline = monotonic() + ceiling
    while not condition():
        if monotonic() > deadline:
            raise AssertionError(f"timed out after {ceiling:.0f} s waiting for {what}; screen:\n"
                                 f"{screen_text(pilot.app)}")
        await pilot.pause(0.02)
    await pilot.pause(0)  # let the refresh the change asked for reach the screen


async def hold_key(pilot, key: str, times: int) -> None:
    """Key repeat: `times` presses sent back to back, as a terminal does for a held key.

    Pilot.press waits for the whole process to go idle after each key, which with torch's
    worker threads around can take longer than the debounce; a held key does not wait.
    """
    from textual import events

    for _ in range(times):
        pilot.app.post_message(events.Key(key, key if len(key) == 1 else None))
    await pilot.pause(0)


async def hold_keys(pilot, keys: list[str]) -> None:
    """Keys sent back to back, as fast typing or a paste delivers them."""
    from textual import events

    chars = {"slash": "/"}
    for key in keys:
        pilot.app.post_message(events.Key(key, chars.get(key, key if len(key) == 1 else None)))
    await pilot.pause(0)


def patient_pilot() -> None:
    """Textual's Pilot waits at most 30 s after each key for the screen to take it (then raises
    WaitForScreenTimeout): the same ceiling as every other wait here."""
    from functools import partialmethod

    from textual.pilot import Pilot

    if not isinstance(Pilot.__dict__["_wait_for_screen"], partialmethod):
        Pilot._wait_for_screen = partialmethod(Pilot._wait_for_screen, timeout=WAIT_SECONDS)  # type: ignore[method-assign, assignment]


def screen_text(app) -> str:
    """The characters on screen, as a person reads them. Textual has no public text capture
    (export_screenshot is SVG); this one private call is kept here, in one place."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())
