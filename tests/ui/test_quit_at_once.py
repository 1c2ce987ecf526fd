"""Quitting before the first frame has been drawn ends cleanly (exit 0, no traceback)."""

from __future__ import annotations

import os
import pty
import select
import sys
import time


def test_q_typed_before_the_first_frame_exits_cleanly(tmp_path):
    for i in range(3):
        (tmp_path / f"data_{i}.pt").write_bytes(b"")
    pid, fd = pty.fork()
    if pid == 0:  # child: the real app on a real terminal
        os.environ.update(TERM="xterm-256color", COLUMNS="100", LINES="30")
        os.execv(sys.executable, [sys.executable, "-m", "eagle3_tui", str(tmp_path)])
    os.write(fd, b"q")  # typed at once: it waits in the terminal until the app reads it
    out = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    text = out.decode("utf-8", "replace")
    assert "Traceback" not in text and "MountError" not in text
    assert os.waitstatus_to_exitcode(status) == 0
