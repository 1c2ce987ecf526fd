"""Rough edge 10 of issue 24: the dataset view with --drafter scores a few files per group (as
`scan --accept`), in the scan's worker with its progress: a sortable top-1 column for the files
scored, each group's line with what it costs against the majority, and esc stops the step."""

from __future__ import annotations

import asyncio

import pytest

from tests.helpers.dataset_view import open_dataset
from tests.helpers.tui import WatchedSource, make_drafter_app, screen_text, wait_until


def _tail(screen) -> str:
    return "\n".join(text for _style, text in screen.findings_list.tail)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_top1_column_sorts_and_each_group_says_its_cost(demo_drafter, size):
    demo = demo_drafter
    app = make_drafter_app(demo, str(demo / "drafter"))
    async with app.run_test(size=size) as pilot:
        screen = await open_dataset(pilot, demo, on="README.txt")  # a file: D scans the open folder
        # every status line the view shows (polling the state missed a step that ran between polls)
        statuses: list[str] = []
        set_status = screen.set_status

        def recording(text: str, **kwargs) -> None:
            statuses.append(text)
            set_status(text, **kwargs)

        screen.set_status = recording
        await wait_until(pilot, lambda: screen.accept_state == "done", what="the acceptance step")
        # the step ran with its progress on screen
        assert any(s.startswith("scoring acceptance 1/") and s.endswith("(esc stops)") for s in statuses), statuses
        await app.workers.wait_for_complete()
        await pilot.pause()
        scored = {r.get("path"): r.get("top1") for r in screen.rows.records if r.get("top1") is not None}
        assert len(scored) >= 4
        # the column sorts: s until it is the sort column, the scored files come first, ascending
        for _ in range(len(screen.rows.columns)):
            if screen.rows.sort_col == "top1":
                break
            await pilot.press("s")
        assert screen.rows.sort_col == "top1"
        first = [screen.rows.records[i].get("top1") for i in screen.rows.view[:len(scored)]]
        assert first == sorted(scored.values())
        assert "top-1" in screen_text(app)
        assert f"{100 * min(scored.values()):.1f}%" in screen_text(app)
        tail = _tail(screen)  # scan --accept's lines (dataset/acceptance.py), one per group
        assert "acceptance (drafter" in tail and "majority: step-1 top-1" in tail, tail
        assert "vs the majority's" in tail, tail  # another group, and what it costs against the majority


class _HeldSource(WatchedSource):
    """The real local source whose drafter runs wait until the test lets them go: the step is
    surely still scoring when esc comes (a fast or cached run could otherwise end between polls)."""

    def __init__(self) -> None:
        super().__init__()
        self.go = asyncio.Event()

    async def accept(self, path, drafter, **kw):
        await self.go.wait()
        return await super().accept(path, drafter, **kw)


async def test_esc_stops_the_acceptance_step(demo_drafter):
    demo = demo_drafter
    source = _HeldSource()
    app = make_drafter_app(demo, str(demo / "drafter"), source)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, demo, on="README.txt")
        await wait_until(pilot, lambda: screen.accept_state == "scoring", what="scoring")
        assert "(esc stops)" in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.accept_state is not None and screen.accept_state != "scoring", what="stopped")
        source.go.set()
        assert screen.accept_state == "cancelled"
        assert app.screen is screen  # esc stopped the step, it did not leave the view
        assert "interrupted" in _tail(screen)
        await pilot.pause()
        assert screen.accept_state == "cancelled"  # letting the run go after esc changes nothing
