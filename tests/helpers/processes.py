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
