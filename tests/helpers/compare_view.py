"""Driving the compare view in tests: the demo's expected findings, waiting for the listing and
the compare result, going to a file (the `demo` dataset fixture is in tests/ui/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.tui import wait_until

SHARD = "train/rows_0-2000"


def expected(demo: Path, capture: str) -> dict:
    """README.txt's row for one capture: which training sample, which finding it must give."""
    for line in (demo / "README.txt").read_text().splitlines():
        if line.startswith(f"infer/{capture} |"):
            cap, train, finding, *_ = [p.strip() for p in line.split("|")]
            return {"capture": cap, "train": train, "finding": None if finding == "none" else finding}
    raise KeyError(capture)


async def compare_done(pilot) -> None:
    """Wait for the compare worker to finish and its result to be on screen (no sleeping)."""
    app = pilot.app
    workers = [w for w in app.workers if w.group == "compare"]
    await app.workers.wait_for_complete(workers)
    await pilot.pause()
    await wait_until(pilot, lambda: not getattr(app.screen, "running", False), what="compare result")


async def listing_done(pilot) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")


async def started(pilot) -> None:
    """The first listing is on screen. The sample panel stops following the cursor (it would load
    a summary on every file the setup passes; the compare view does not need them)."""
    await listing_done(pilot)
    pilot.app.main_screen.debounce_seconds = 600


async def go_to(pilot, folder: Path, name: str) -> None:
    """Open `folder` in the browser with the cursor on `name`. (Setup only: typing a filter key
    by key waits for the app to go idle after each key; one test walks there by keys.)"""
    main = pilot.app.main_screen
    main.open_folder(str(folder), select=name)
    await listing_done(pilot)
    await pilot.pause()
    current = main.browser.current
    assert current is not None and current.name == name, f"cursor on {current}, wanted {name}"


__all__ = ["make_app", "wait_until", "compare_done", "listing_done", "started", "go_to", "expected", "SHARD"]


def grid_row(lines: list[str], name: str) -> list[str]:
    """The three cells of row `name` (B0..B2) of the cosine grid on screen."""
    for line in lines:
        words = line.split()
        if name in words and words.index(name) + 3 < len(words) + 1:
            cells = words[words.index(name) + 1:words.index(name) + 4]
            if len(cells) == 3 and all(c.replace(".", "").replace("-", "").isdigit() for c in cells):
                return cells
    raise AssertionError(f"no grid row {name} on screen")
