"""The layer_group search (dataset/layer_group.py) in a child process, for the TUI.

The search needs torch, and importing torch costs the TUI's process ~200 MiB that it keeps for
good; the dataset view of a remote scan needs nothing else from torch. So the view passes
ChildRuns(...) as dataset_findings()'s `layer_runs`: the child gets only the signature numbers
(n x d float64 and a shard number per file, a few MiB for 100,000 files) and sends back the runs
as JSON (floats round-trip exactly), so the findings are the ones computed in-process.

`cancelled()` is polled while the child works: when it says yes, the child is killed and
FindingsCancelled raised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import eagle3_tui

if TYPE_CHECKING:
    from eagle3_tui.dataset.shapes import LayerRuns

#: how often cancelled() is asked while the child works
POLL_SECONDS = 0.05


class FindingsCancelled(Exception):
    pass


class ChildRuns:
    def __init__(self, cancelled: Callable[[], bool] = lambda: False) -> None:
        self.cancelled = cancelled
        #: the child's process id once started (it is gone, killed or reaped, when the call
        #: returns), and how it ended (negative: the signal that killed it)
        self.pid: int | None = None
        self.returncode: int | None = None

    def __call__(self, values: list[list[float]], shard_of: list[int]) -> LayerRuns:
        n, d = len(values), len(values[0]) if values else 0
        flat = array("d")
        for row in values:
            flat.extend(row)
        payload = (json.dumps({"n": n, "d": d}).encode() + b"\n" + flat.tobytes()
                   + array("q", shard_of).tobytes())
        # the package's own folder first: the child runs this checkout's code, whatever the
        # environment's PYTHONPATH or installed copy says
        top = str(Path(eagle3_tui.__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([top, *filter(None, [os.environ.get("PYTHONPATH")])])}
        # files, not pipes: a pipe of a few MiB would need a writer thread to not deadlock
        with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stdout, \
                tempfile.TemporaryFile() as stderr:
            stdin.write(payload)
            stdin.seek(0)
            proc = subprocess.Popen([sys.executable, "-m", "eagle3_tui.dataset.layer_group"], stdin=stdin,
                                    stdout=stdout, stderr=stderr, env=env)
            self.pid = proc.pid
            try:
                while True:
                    try:
                        code = proc.wait(POLL_SECONDS)
                        break
                    except subprocess.TimeoutExpired:
                        if self.cancelled():
                            raise FindingsCancelled() from None
            finally:
                if proc.returncode is None:
                    proc.kill()
                    proc.wait()
                self.returncode = proc.returncode
            if code != 0:
                stderr.seek(0)
                lines = stderr.read().decode("utf-8", "replace").strip().splitlines()
                raise RuntimeError(f"the layer-group search failed: {lines[-1] if lines else f'exit code {code}'}")
            stdout.seek(0)
            return json.loads(stdout.read())
