"""Issue 44, item 6: the torch gate orders versions as PEP 440 (and pip's torch>=2.10) does, and
the flag that turns it off is spelled out in full."""

from __future__ import annotations

import sys

import pytest

from eagle3_tui.engines.read import torch_gate
from tests.helpers import warm_cli
from tests.helpers.processes import subprocess_env

# each checked against packaging.version.Version(v) >= Version("2.10") when it was written
BELOW = ["2.10.0.0a1", "2.10.0.0rc1", "2.10.0.0.dev20250101", "2.10.0a0", "2.10.0rc1+cpu", "2.10.dev1",
         "2.9.9", "2.9.0.post5", "2.1", "0.4.1"]
INVALID = ["2.10.0 rc1", "2.10.0~rc1", "unknown", "", "2.10.0+", "two.ten"]
SAFE = ["2.10", "2.10.0", "2.10.0+cpu", "2.13.0+cu121", "2.10.0.post1", "2.10.post1.dev1", "v2.10.1",
        "2.10.0-1", "2.11.0.dev20260101+cpu", "3.0.0rc1", "2.100", "1!0.1", " 2.10.0 "]


@pytest.mark.parametrize("version", BELOW + INVALID)
def test_a_version_before_2_10_or_not_pep_440_is_refused(version):
    assert not torch_gate.safe_version(version)
    assert torch_gate.problem(version) is not None and "cannot load .pt files safely" in torch_gate.problem(version)


@pytest.mark.parametrize("version", SAFE)
def test_2_10_and_later_pass(version):
    assert torch_gate.safe_version(version) and torch_gate.problem(version) is None


@pytest.mark.parametrize("flag", ["--trust", "--tr", "--trust-d", "--trus"])
def test_an_abbreviated_trust_data_is_refused_by_every_parser(tmp_path, flag):
    for args in (["summary", str(tmp_path / "x.ckpt"), flag], [str(tmp_path), flag]):
        p = warm_cli.run([sys.executable, "-m", "eagle3_tui", *args], capture_output=True, text=True, timeout=60,
                         env=subprocess_env())
        assert p.returncode == 2 and "spelled out in full: --trust-data" in p.stderr, (args, p.stderr)
        assert len(p.stderr.splitlines()) == 1


_RACE = """
import sys, threading
from eagle3_tui.engines.read import torch_gate
seen = []
def importer():
    import torch  # noqa: F401
def asker():
    while "torch" not in sys.modules:
        pass
    seen.append(torch_gate.torch_version())
b = threading.Thread(target=asker); a = threading.Thread(target=importer)
b.start(); a.start(); a.join(); b.join()
import torch
print(seen[0] == torch.__version__, seen[0])
"""


def test_a_torch_another_thread_is_importing_is_not_taken_for_an_unknown_one():
    """serve-check --live loads samples in a thread while the dataset's scan imports torch in
    another: the gate saw the half-imported module (no __version__ yet) as torch "unknown" and
    refused every file. It waits for the import instead."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", _RACE], capture_output=True, text=True, timeout=300, cwd=root,
                         check=True).stdout
    assert out.startswith("True"), out
