"""Fixtures for the TUI tests: real seeded torch files in real folders, a counting LocalSource."""

from __future__ import annotations

import shutil
from pathlib import Path
from time import monotonic

import pytest

from eagle3_tui.sources.local import LocalSource
from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.connect import Opened
from tests.ui.data import make_tree, write_specforge


class CountingSource(LocalSource):
    """The real local source, recording which files were summarised (to prove the debounce)."""

    def __init__(self) -> None:
        super().__init__()
        self.summarized: list[str] = []

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


async def wait_until(pilot, condition, timeout: float = 15.0, what: str = "condition") -> None:
    """Let the app run until `condition()` holds (the app's workers post their messages)."""
    deadline = monotonic() + timeout
    while not condition():
        if monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; screen:\n{screen_text(pilot.app)}")
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


def screen_text(app) -> str:
    """The characters on screen, as a person reads them. Textual has no public text capture
    (export_screenshot is SVG); this one private call is kept here, in one place."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


@pytest.fixture(scope="session")
def tree(tmp_path_factory) -> Path:
    return make_tree(tmp_path_factory.mktemp("tree"))


@pytest.fixture(scope="session")
def many_samples(tmp_path_factory) -> Path:
    """A folder with a sub-folder first (so nothing loads at start) and 60 sample files."""
    root = tmp_path_factory.mktemp("many")
    (root / "aaa").mkdir()
    first = write_specforge(root / "data_0.ckpt", tokens=16, hidden=16)
    for i in range(1, 60):
        shutil.copyfile(first, root / f"data_{i}.ckpt")
    return root


@pytest.fixture(scope="session")
def big_folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("big")
    for i in range(3000):
        (root / f"data_{i}.ckpt").touch()
    return root
