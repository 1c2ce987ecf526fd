"""t, i and c on the main screen: the two sides of the compare view pinned in the browser (their
rules: ui/browser/pins.py), said in the pins bar and the status line, and the compare view opened
on them (ui/compare/screen.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, cast

from eagle3_tui.ui.browser.pins import ComparePins, Pin
from eagle3_tui.ui.main.host import Host, Parts

if TYPE_CHECKING:
    from eagle3_tui.target import Target


class PinsHost(Parts, Protocol):
    pins: ComparePins

    def file_under_cursor(self) -> str | None: ...

    def canonical_target(self) -> Target | None: ...


class Pinning:
    def __init__(self, screen: PinsHost, show_bar: Callable[[], None]) -> None:
        self.screen = screen
        self.show_bar = show_bar  # the pins bar above the status line, mounted once something is pinned

    def at(self, path: str | None) -> Pin | None:
        return Pin.at(path, self.screen.where, self.screen.canonical_target())

    def say(self, said: tuple[str, bool] | None) -> None:
        self.show_bar()
        if said is not None:
            self.screen.status_line.say(said[0], error=said[1])

    def pin_training(self) -> None:
        self.say(self.screen.pins.pin_training(self.at(self.screen.file_under_cursor())))

    def choose_inference(self) -> None:
        self.say(self.screen.pins.choose_inference(self.at(self.screen.file_under_cursor())))

    def swap(self) -> None:
        self.say(self.screen.pins.swap())

    def open_compare(self) -> None:
        screen, pins = self.screen, self.screen.pins
        problem = pins.ready(self.at(screen.file_under_cursor()), screen.where, screen.source is not None)
        self.say(problem)
        if problem is not None:
            return
        # lazy: the compare view is imported on first use: it is not needed for the first frame
        from eagle3_tui.ui.compare.screen import CompareScreen

        assert screen.source is not None and pins.a is not None and pins.b is not None
        analysis, target = cast("Host", screen.app).analysis, screen.target
        screen.app.push_screen(CompareScreen(
            screen.source, pins.a.path, pins.b.path, screen.where,
            drafter=analysis.path_for("drafter", target) if target is not None else None,
            model=analysis.path_for("model", target) if target is not None else None,
            tokenizer=analysis.tokenizer_choice(), data=target, roles=pins.roles()))
