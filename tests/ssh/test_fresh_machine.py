"""The README's test command on a machine without OpenSSH's sshd: the OpenSSH tests are skipped
with a reason a newcomer can act on, and under EAGLE3_TUI_REQUIRE_SSHD=1 (CI) they fail instead."""

import os
import sys
from pathlib import Path

from tests.helpers import warm_cli

ROOT = Path(__file__).resolve().parents[2]
# One test that needs sshd through the session fixture, one through its own module fixture,
# and one asyncssh-only test that must still run.
SELECTED = [
    "tests/ssh/test_listing.py::test_listing_matches_the_local_one",
    "tests/ui/compare/test_compare_ssh.py",
]


def run_without_sshd(tmp_path, **env):
    environment = {k: v for k, v in os.environ.items() if k != "EAGLE3_TUI_REQUIRE_SSHD"}
    environment.update(PYTHONPATH=str(ROOT), EAGLE3_TUI_TEST_SSHD=str(tmp_path / "no-sshd"), **env)
    return warm_cli.run([sys.executable, "-m", "pytest", "-q", "-n0", "-rs", "-p", "no:cacheprovider", *SELECTED],
                        cwd=ROOT, env=environment, text=True, timeout=600)


def test_without_sshd_the_openssh_tests_skip_with_a_reason(tmp_path):
    run = run_without_sshd(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "OpenSSH sshd not found" in run.stdout and "install openssh-server" in run.stdout
    assert "1 passed" in run.stdout  # the asyncssh half still runs
    assert "FileNotFoundError" not in run.stdout + run.stderr


def test_ci_refuses_to_skip_them(tmp_path):
    run = run_without_sshd(tmp_path, EAGLE3_TUI_REQUIRE_SSHD="1")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "EAGLE3_TUI_REQUIRE_SSHD=1 forbids skipping them" in run.stdout
    assert "skipped" not in run.stdout
