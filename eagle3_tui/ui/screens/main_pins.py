"""The compare pins from the main screen: t pins the training side, i picks the inference side,
c opens the compare view (ui/screens/compare.py); the pins themselves and their rules are
ui/pins.py, the bar that shows them is its PinsBar.

A part of MainScreen (a mixin): the state it reads (pins, source, target) lives on the screen.
"""

from __future__ import annotations

from eagle3_tui.ui.pins import Pin, PinsBar


class ComparePinning:
    """MainScreen's t, i and c."""

    def _pin_under_cursor(self) -> Pin | None:
        path = self.file_under_cursor()
        if path is None:
            return None
        place = self._place()
        return Pin(path, self.where, place.with_path(path) if place is not None else None)

    def _show_pins(self) -> None:
        bars = self.query(PinsBar)
        if not bars:
            if self.pins.empty:
                return
            self.mount(PinsBar(id="pins"), before=self.query_one("#status"))
            bars = self.query(PinsBar)
        bars.first().show(self.pins, self.where)

    def action_pin_training(self) -> None:
        text, error = self.pins.pin_training(self._pin_under_cursor())
        self._show_pins()
        self.set_status(text, error=error)

    def action_choose_inference(self) -> None:
        text, error = self.pins.choose_inference(self._pin_under_cursor())
        self._show_pins()
        self.set_status(text, error=error)

    def action_open_compare(self) -> None:
        problem = self.pins.ready(self._pin_under_cursor(), self.where, self.source is not None)
        self._show_pins()
        if problem is not None:
            self.set_status(problem[0], error=problem[1])
            return
        # the compare view is imported on first use: it is not needed for the first frame
        from eagle3_tui.ui.screens.compare import CompareScreen

        assert self.source is not None and self.pins.a is not None and self.pins.b is not None
        analysis, target = self.app.analysis, self.target
        self.app.push_screen(CompareScreen(
            self.source, self.pins.a.path, self.pins.b.path, self.where,
            drafter=analysis.path_for("drafter", target) if target is not None else None,
            model=analysis.path_for("model", target) if target is not None else None,
            tokenizer=analysis.tokenizer_choice(), data=target))

    def swap_pins(self) -> None:
        """The compare view swapped its sides (PinsSwapped): the pins follow."""
        self.pins.swap()
        self._show_pins()
