"""Driving the dataset view in tests: a slowed local source, a source that streams many records,
opening the view and waiting for its scan (the datasets are the `planted` and `clean` fixtures of
tests/helpers/scan.py)."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path

from eagle3_tui.sources.local import LocalSource
from tests.helpers.tui import wait_until


class SlowSource(LocalSource):
    """The real local scan, handed on one record at a time with a pause: a long scan to cancel."""

    def __init__(self, delay: float = 0.05) -> None:
        super().__init__()
        self.delay = delay
        self.closed_scan = False

    async def scan(self, path, **kwargs):
        kwargs["workers"] = 1  # one file at a time in the scan thread: it is still running when cancelled
        inner = super().scan(path, **kwargs)
        try:
            async for item in inner:
                yield item
                await asyncio.sleep(self.delay)
        finally:
            await inner.aclose()
            self.closed_scan = True


class StreamSource(LocalSource):
    """Streams `count` records copied from one real record (paths and norms varied), as fast as
    a box with a warm cache would: the view's load without a real 100,000-file tree."""

    def __init__(self, template: dict, count: int, *, page: int = 500, delay: float = 0.0) -> None:
        super().__init__()
        self.template, self.count, self.page, self.delay = template, count, page, delay

    async def scan(self, path, **kwargs):
        for start in range(0, self.count, self.page):
            for i in range(start, min(self.count, start + self.page)):
                yield synth(self.template, i)
            yield {"progress": {"files_done": min(self.count, start + self.page), "files_total": self.count,
                                "bytes_done": 0, "bytes_total": 0, "seconds": 1.0, "listing_done": True}}
            await asyncio.sleep(self.delay)


def synth(template: dict, i: int) -> dict:
    r = copy.deepcopy(template)
    shard = i // 2000 * 2000
    r["path"] = f"rows_{shard}-{shard + 2000}/data_{i}.ckpt"
    r["shard"] = f"rows_{shard}-{shard + 2000}"
    r["index"] = i
    r["fingerprint"] = f"{i:024x}"
    for j, s in enumerate(r["slots"]):
        s["norm_mean"] = s["norm_mean"] * (1 + ((i * 7919 + j) % 101 - 50) / 1000)
    return r


def without_cache(monkeypatch) -> None:
    """The dataset views opened from now on scan without the record cache. Setting the screen's
    use_cache once it is shown is too late: its scan opens the cache as it starts."""
    from eagle3_tui.ui.dataset.screen import DatasetScreen

    monkeypatch.setattr(DatasetScreen, "make_cache", staticmethod(lambda: None))


async def open_dataset(pilot, folder: Path, on: str | None = None) -> object:
    """Open `folder` in the browser (cursor on `on`), press D; returns the dataset screen."""
    from eagle3_tui.ui.dataset.screen import DatasetScreen

    app = pilot.app
    main = app.main_screen
    await wait_until(pilot, lambda: main.listing_done, what="first listing")
    main.debounce_seconds = 600  # the sample panel does not follow the cursor during setup
    main.open_folder(str(folder), select=on)
    await wait_until(pilot, lambda: main.listing_done and (on is None or (main.browser.current and main.browser.current.name == on)),
                     what="listing")
    await pilot.press("D")
    await wait_until(pilot, lambda: isinstance(app.screen, DatasetScreen), what="dataset view")
    return app.screen


async def scan_done(pilot, screen, states=("done",)) -> None:
    """The scan worker finished and the findings are on screen."""
    await wait_until(pilot, lambda: screen.state in states, what=f"scan state in {states}")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
