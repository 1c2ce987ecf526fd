"""The two sides of the compare view, chosen in the browser: t pins the training side (A),
i chooses the inference side (B), c opens the view. Each pin keeps what its file is (a training
sample or an inference capture): after the compare view's s swap, A is the capture, and the bar and
the status line say so.

`ComparePins` is plain state with the rules of pinning; each step returns what the status line
should say, and the main screen shows it. `PinsBar` draws the pins above the status line.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, replace

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from eagle3_tui.names import printable
from eagle3_tui.target import Target

#: (text for the status line, whether it is an error)
Say = tuple[str, bool]

ACROSS = "A and B are on different machines: comparing across machines is not supported"
#: what a pinned file is, in the words the compare view's header uses
TRAINING, INFERENCE = "training", "inference"


@dataclass(frozen=True)
class Pin:
    path: str
    #: "local" or "user@host": the machine the file is on
    where: str
    #: the file as a target (user, host, port, path), when the screen knows it
    target: Target | None = None
    #: what the file is: TRAINING (pinned with t) or INFERENCE (chosen with i or c); a swap keeps it
    role: str = TRAINING

    @property
    def name(self) -> str:
        """The file name, escaped for the terminal (it is only ever shown)."""
        return printable(posixpath.basename(self.path) or self.path)

    @classmethod
    def at(cls, path: str | None, where: str, place: Target | None) -> Pin | None:
        """The pin of `path` on the open target `place` (None: no file to pin)."""
        if path is None:
            return None
        return cls(path, where, place.with_path(path) if place is not None else None)


@dataclass
class ComparePins:
    """The two sides chosen in the browser. Kept by the main screen across compare views."""

    a: Pin | None = None  # training
    b: Pin | None = None  # inference

    @property
    def empty(self) -> bool:
        return self.a is None and self.b is None

    @property
    def swapped(self) -> bool:
        """A is the capture or B the training sample (the compare view's s)."""
        return (self.a is not None and self.a.role != TRAINING) or (self.b is not None and self.b.role != INFERENCE)

    def roles(self) -> tuple[str, str]:
        """What A and B are (the compare view's header names them)."""
        return (self.a.role if self.a is not None else TRAINING, self.b.role if self.b is not None else INFERENCE)

    def swap(self) -> Say:
        """The compare view swapped its sides: what the status line says now, each side named as
        it now is (the line that named the old B must not stay)."""
        self.a, self.b = self.b, self.a
        a, b = (f"{p.name} ({p.role})" if p is not None else "-" for p in (self.a, self.b))
        return f"swapped: A is {a}, B is {b}", False

    def across_hosts(self) -> bool:
        return self.a is not None and self.b is not None and self.a.where != self.b.where

    def pin_training(self, pin: Pin | None) -> Say:
        if pin is None:
            return "put the cursor on a training sample file, then t pins it", True
        self.a = pin = replace(pin, role=TRAINING)
        base = posixpath.basename(pin.path)
        if self.b is not None and self.b.role != INFERENCE:  # after a swap B was the training side
            self.b = replace(self.b, role=INFERENCE)
        if self.across_hosts():
            return ACROSS, True
        if self.b is None or self.b.path == pin.path:
            return (f"training side A: {base} · now the inference capture: "
                    "i chooses it, or c compares with the file under the cursor"), False
        return f"training side A: {base} · c compares it with {self.b.name}", False

    def choose_inference(self, pin: Pin | None) -> Say:
        if pin is None:
            return "put the cursor on an inference capture file, then i chooses it", True
        self.b = pin = replace(pin, role=INFERENCE)
        base = posixpath.basename(pin.path)
        if self.a is not None and self.a.role != TRAINING:  # after a swap A was the capture
            self.a = replace(self.a, role=TRAINING)
        if self.across_hosts():
            return ACROSS, True
        if self.a is None:
            return f"inference side B: {base} · now pin the training sample with t", False
        return f"inference side B: {base} · c compares it with {self.a.name}", False

    def ready(self, under_cursor: Pin | None, here: str, connected: bool) -> Say | None:
        """None when A and B can be compared from the browser on `here`; else why not.
        With only A pinned, the file under the cursor becomes B."""
        if self.a is None:
            return "first pin the training sample: t with the cursor on it", True
        if self.b is None:
            if under_cursor is None or under_cursor.path == self.a.path:
                return "choose the inference capture: i (or c) with the cursor on it", True
            self.b = replace(under_cursor, role=INFERENCE)
        if self.across_hosts():
            return (f"A is on {self.a.where} and B on {self.b.where}: comparing across machines is "
                    "not supported; pin both on one machine"), True
        if not connected or self.a.where != here:
            return (f"the pinned files are on {self.a.where}; the browser is on {here or 'nothing'} "
                    "now: open that target again to compare them"), True
        return None

    def text(self, here: str) -> tuple[Text, bool]:
        """The bar's line, and whether it reports an error."""
        if self.across_hosts():
            assert self.a is not None and self.b is not None
            return Text(f"⇄ A {self.a.name} is on {self.a.where}, B {self.b.name} on {self.b.where}: "
                        "comparing across machines is not supported; pin both on one machine"), True
        out = Text("⇄ compare  ")
        for tag, pin, style, hint in (("A", self.a, "bold green", "t on a training sample"),
                                      ("B", self.b, "bold blue", "i on a capture, or c on it")):
            out.append(f"{tag} ", style)
            if pin is None:
                out.append(hint, "italic")
            else:
                out.append(pin.name)
                if self.swapped:  # A is not the training sample: say what each side is now
                    out.append(f" ({pin.role})", "italic")
                if pin.where != here:
                    out.append(f" on {pin.where}", "bold red")
            out.append("   ")
        if self.a is not None:
            out.append("c compares", "dim")
        return out, False


class PinsBar(Static):
    """One line above the status line once something is pinned: what A and B are."""

    def show(self, pins: ComparePins, here: str) -> None:
        text, error = pins.text(here)
        self.update(text)
        self.set_class(error, "-error")

    @classmethod
    def show_in(cls, screen: Widget, pins: ComparePins, here: str, *, before: str) -> None:
        """Show `pins` on `screen`, mounting the bar above `before` once something is pinned."""
        bars = screen.query(cls)
        if not bars:
            if pins.empty:
                return
            screen.mount(cls(id="pins"), before=screen.query_one(before))
            bars = screen.query(cls)
        bars.first().show(pins, here)
