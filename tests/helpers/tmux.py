"""Driving the real app in a real terminal: tmux at a fixed size, keys as a user types them,
the screen as text (capture-pane). For what Pilot cannot show: the terminal's own key names,
the whole program started by its command line."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from tests.helpers.tui import WAIT_SECONDS


class Tmux:
    """One detached tmux session running `argv` (the session is this object's own: kill() ends it)."""

    def __init__(self, argv: list[str], width: int, height: int, env: dict[str, str] | None = None) -> None:
        if shutil.which("tmux") is None:
            pytest.skip("tmux is not installed")
        self.name = f"e3t-{uuid.uuid4().hex[:8]}"
        self.socket = f"e3t-test-{os.getpid()}"  # a server of our own: the user's sessions are not touched
        command = " ".join(shlex.quote(a) for a in argv)
        environ = {**os.environ, **(env or {})}
        subprocess.run(["tmux", "-L", self.socket, "new-session", "-d", "-s", self.name, "-x", str(width),
                        "-y", str(height), command], check=True, env=environ)

    def keys(self, *keys: str, literal: bool = False) -> None:
        args = ["tmux", "-L", self.socket, "send-keys", "-t", self.name]
        subprocess.run(args + (["-l"] if literal else []) + list(keys), check=True)

    def screen(self) -> str:
        out = subprocess.run(["tmux", "-L", self.socket, "capture-pane", "-p", "-t", self.name],
                             capture_output=True, text=True, check=False)
        return out.stdout

    def wait_for(self, condition, what: str = "the screen") -> str:
        """Poll the terminal until `condition(screen)` holds (a terminal has no idle signal), at
        most the tests' one ceiling (tests/helpers/tui.py WAIT_SECONDS)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            text = self.screen()
            if condition(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{text}")
            time.sleep(0.1)

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False, capture_output=True)


def app_argv(*args: str) -> list[str]:
    """The TUI as `eagle3-tui ARGS` runs it, with this interpreter."""
    return [sys.executable, "-m", "eagle3_tui", *args]
