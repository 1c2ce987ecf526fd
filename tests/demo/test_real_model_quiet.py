"""Issue 44, item 10: the first `demo --real` builds the real model from its GGUF; transformers'
GGUF reader drew a tqdm bar that the terminal-safe stderr printed with its carriage returns escaped
(`\\r` as two characters, one long line). The build says its own step, and nothing else.

The build watched is the test world's own first one (into the real-model cache, when it is empty:
the test runs first in the "real" worker, tests/real/conftest.py) rather than a second one of its
own, 15 s of CPU; with the cache already filled, or filled meanwhile by another worker, it builds in
a cache of its own."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers.processes import subprocess_env
from tests.helpers.real_world import real_cache, require_real

_BUILD = """
import sys
from pathlib import Path
from eagle3_tui.names import TerminalSafe
from eagle3_tui.demo.real_model import model_folder
sys.stderr = TerminalSafe(sys.stderr)  # as cli.main wraps it
model_folder(Path(sys.argv[1]), say=lambda line: print(f"demo --real {line}", file=sys.stderr, flush=True))
"""


def _build(cache):
    p = subprocess.run([sys.executable, "-c", _BUILD, str(cache)], capture_output=True, text=True,
                       env=subprocess_env(), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return p


def _built(cache) -> bool:
    from eagle3_tui.demo.real_model import SMOLLM2, gguf_parts

    return (cache / "real-model" / gguf_parts(SMOLLM2)[1] / "config.json").is_file()


@pytest.mark.xdist_group("real")
def test_the_first_build_of_the_real_model_prints_no_progress_bar(tmp_path):
    require_real()
    p = None if _built(real_cache()) else _build(real_cache())
    if p is None or not p.stderr:  # built before (or by another worker while this one waited)
        p = _build(tmp_path / "cache")
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("demo --real dequantizing "), p.stderr[-2000:]
    assert "\\r" not in p.stderr and "\r" not in p.stderr
