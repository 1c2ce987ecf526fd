"""The demo dataset (eagle3_tui/demo) as test data, written once per test run.

Nine areas read the demo; each used to write its own, in every xdist worker that ran it (with the
trained drafter, ~5 s a copy on 2 busy cores). Here the first worker that needs a demo writes it
under a lock in the run's shared temp folder, and every other test reads that one. The tests only
read it, as the tool only reads a dataset: each worker that uses a copy registers it with
`untouched` (tests/helpers/ssh.py), which fails the run if a byte of it changed.

    folder, manifest = demo_once(tmp_path_factory, untouched)                # write_demo(seed=0)
    folder, manifest = demo_once(tmp_path_factory, untouched, drafter=True)  # and its drafter/
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any, Callable


def run_temp(tmp_path_factory) -> Path:
    """The temp folder every worker of this run shares (one worker's own under xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def demo_once(tmp_path_factory, untouched: Callable[[Path], Any], *, drafter: bool = False) -> tuple[Path, dict]:
    """(the demo folder, write_demo's manifest): written by the first caller of this run."""
    top = run_temp(tmp_path_factory) / ("demo-with-drafter" if drafter else "demo")
    top.mkdir(exist_ok=True)
    folder, written = top / "eagle3-demo", top / "manifest.json"
    with open(top / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the others wait here while one writes
        if not written.exists():
            from eagle3_tui.demo.dataset import write_demo  # lazy: torch

            manifest = write_demo(str(folder), seed=0, drafter=drafter)
            written.write_text(json.dumps(manifest))
    untouched(folder)
    return folder, json.loads(written.read_text())
