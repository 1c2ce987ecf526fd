"""Run `eagle3-tui scan ...` with stderr on a terminal (so its progress line shows), send ctrl+c
once the progress line says `marker`, and return what the user got."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def interrupt_scan_at(marker: bytes, *args: str) -> tuple[int, str, dict]:
    """(exit status, what the terminal showed, the last --json line)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "eagle3_tui", "scan", *args], stdout=subprocess.PIPE,
                            stderr=slave, env={**os.environ, "PYTHONPATH": str(ROOT)})
    os.close(slave)
    # stdout drained meanwhile: records (1-5 KB each) fill a pipe nobody
    # reads long before the marker shows, and the scan would wait on it for ever
    out_parts: list[bytes] = []
    reader = threading.Thread(target=lambda: out_parts.append(proc.stdout.read()), daemon=True)
    reader.start()
    seen = b""
    while marker not in seen:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal: it ended before the marker
            chunk = b""
        assert chunk, seen
        seen += chunk
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=120)
    reader.join(timeout=60)
    out = b"".join(out_parts)
    try:
        while chunk := os.read(master, 4096):
            seen += chunk
    except OSError:  # the terminal's other end closed
        pass
    os.close(master)
    return proc.returncode, seen.decode("utf-8", "replace"), json.loads(out.decode().splitlines()[-1])
