"""Asks the user to trust an SSH host key seen for the first time (trust on first use).

Shows the key algorithm and SHA256 fingerprint so the user can check them against the
server (`ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub`). Dismisses with True only on yes.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class HostKeyScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Trust", id="hostkey.yes"),
        Binding("n,escape", "answer(False)", "Refuse", id="hostkey.no"),
    ]

    def __init__(self, prompt: Any) -> None:
        super().__init__()
        self.prompt = prompt

    def compose(self) -> ComposeResult:
        p = self.prompt
        host = p.host if p.port in (None, 22) else f"[{p.host}]:{p.port}"
        with Vertical(id="hostkey-dialog"):
            yield Static("Unknown host key", id="hostkey-title")
            yield Static(
                f"{host} is not in your known_hosts file. Check the fingerprint with the "
                "server's owner before you trust it.",
                id="hostkey-text",
                markup=False,  # "[host]:port" is not markup
            )
            yield Static(f"algorithm    {p.algorithm}", id="hostkey-algorithm", markup=False)
            yield Static(f"fingerprint  {p.fingerprint_sha256}", id="hostkey-fingerprint", markup=False)
            with Horizontal(id="hostkey-buttons"):
                yield Button("Yes, trust and connect (y)", id="hostkey-yes", variant="warning")
                yield Button("No (n)", id="hostkey-no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#hostkey-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "hostkey-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
