"""Running this checkout in a subprocess, as a user would."""

from __future__ import annotations

import os
from pathlib import Path

import eagle3_tui

REPO_ROOT = Path(eagle3_tui.__file__).resolve().parent.parent


def subprocess_env(**extra: str) -> dict[str, str]:
    """The test's environment (temp data dirs from tests/conftest.py) plus this checkout on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def first_line(proc) -> bytes:
    """The child's first stdout line, read byte by byte from an unbuffered pipe (Popen(bufsize=0)).
    communicate() afterwards reads the pipe's descriptor directly: whatever a buffered readline()
    had pulled in beyond the first line would be lost (on a busy machine the child has written
    several lines by then)."""
    line = b""
    while not line.endswith(b"\n"):
        byte = proc.stdout.read(1)
        if not byte:
            break
        line += byte
    return line
