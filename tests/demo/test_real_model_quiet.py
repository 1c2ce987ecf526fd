"""Issue 44, item 10: the first `demo --real` builds the real model from its GGUF; transformers'
GGUF reader drew a tqdm bar that the terminal-safe stderr printed with its carriage returns escaped
(`\\r` as two characters, one long line). The build says its own step, and nothing else."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.processes import subprocess_env
from tests.helpers.real_world import require_real

_BUILD = """
import sys
from pathlib import Path
from eagle3_tui.names import TerminalSafe
from eagle3_tui.demo.real_model import model_folder
sys.stderr = TerminalSafe(sys.stderr)  # as cli.main wraps it
model_folder(Path(sys.argv[1]), say=lambda line: print(f"demo --real {line}", file=sys.stderr, flush=True))
"""


def test_the_first_build_of_the_real_model_prints_no_progress_bar(tmp_path):
    require_real()
    p = subprocess.run([sys.executable, "-c", _BUILD, str(tmp_path / "cache")], capture_output=True, text=True,
                       env=subprocess_env(), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("demo --real dequantizing "), p.stderr[-2000:]
    assert "\\r" not in p.stderr and "\r" not in p.stderr
