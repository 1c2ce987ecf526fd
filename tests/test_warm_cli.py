"""tests/helpers/warm_cli.py stands in for `subprocess.run` in many CLI tests: a run forked from the
warm interpreter must end as a fresh `python` run ends, or those tests would test something else."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.helpers import warm_cli
from tests.helpers.processes import subprocess_env

ENDINGS = {
    "success": "print('out'); import sys; print('err', file=sys.stderr)",
    "status": "import sys; sys.exit(3)",
    "message": "import sys; sys.exit('bye')",
    "exception": "raise ValueError('broken')",
    "ctrl-c": "raise KeyboardInterrupt",
    "atexit": "import atexit; atexit.register(print, 'atexit ran')",
    "thread": "import threading, time; threading.Thread(target=lambda: (time.sleep(0.2), print('joined'))).start()",
}


@pytest.mark.parametrize("code", ENDINGS.values(), ids=list(ENDINGS))
def test_a_warm_run_ends_as_a_fresh_python_does(code):
    warm = warm_cli.run([sys.executable, "-c", code], text=True)
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (warm.returncode, warm.stdout) == (fresh.returncode, fresh.stdout)
    assert warm.stderr.splitlines()[-1:] == fresh.stderr.splitlines()[-1:]


def test_the_command_gives_what_the_installed_one_gives(tmp_path):
    argv = [sys.executable, "-m", "eagle3_tui", "summary", str(tmp_path / "missing.pt"), str(tmp_path)]
    warm = warm_cli.run(argv, text=True, env=subprocess_env())
    fresh = subprocess.run(argv, capture_output=True, text=True, env=subprocess_env())
    assert warm.returncode == fresh.returncode != 0
    assert (warm.stdout, warm.stderr) == (fresh.stdout, fresh.stderr)


def test_each_run_has_its_own_cwd_environment_stdin_and_limit(tmp_path):
    code = ("import os, random, resource, sys; print(os.getcwd(), os.environ.get('WHO'), sys.stdin.read(), "
            "resource.getrlimit(resource.RLIMIT_AS)[0], random.random(), sys.argv[1:])")
    seen = [warm_cli.run([sys.executable, "-c", code, "x", who], input=who, text=True, cwd=tmp_path,
                         env={**os.environ, "WHO": who}, memory=(8 << 30) + i).stdout.split()
            for i, who in enumerate(("first", "second"))]
    for i, (who, words) in enumerate(zip(("first", "second"), seen)):
        assert words[:4] == [str(tmp_path), who, who, str((8 << 30) + i)]
        assert words[-2:] == ["['x',", f"'{who}']"]
    assert seen[0][4] != seen[1][4], "two runs drew the same random numbers"
    assert "WHO" not in os.environ


def test_a_run_past_its_timeout_is_killed():
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as expired:
        warm_cli.run([sys.executable, "-c", "print('begun', flush=True); import time; time.sleep(60)"], timeout=2)
    assert time.monotonic() - started < 30
    assert expired.value.stdout == b"begun\n"


def test_a_warm_popen_waits_kills_and_uses_the_callers_files_as_a_popen_does(tmp_path):
    """warm_cli.Popen stands in for subprocess.Popen in the dataset view's findings child."""
    code = "import sys; data = sys.stdin.read(); print(data.upper()); print('err', file=sys.stderr); sys.exit(4)"
    ends = []
    for popen in (warm_cli.Popen, subprocess.Popen):
        with open(tmp_path / "in", "w+b") as stdin, open(tmp_path / "out", "w+b") as stdout, \
                open(tmp_path / "err", "w+b") as stderr:
            stdin.write(b"rows")
            stdin.seek(0)
            proc = popen([sys.executable, "-c", code], stdin=stdin, stdout=stdout, stderr=stderr, env=subprocess_env())
            code_at_end = proc.wait(60)
            stdout.seek(0)
            stderr.seek(0)
            ends.append((code_at_end, proc.poll(), stdout.read(), stderr.read()))
    assert ends[0] == ends[1] == (4, 4, b"ROWS\n", b"err\n")
    with open(os.devnull, "rb") as null, open(tmp_path / "out", "wb") as out:
        proc = warm_cli.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdin=null, stdout=out, stderr=out)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(0.2)
        assert proc.poll() is None
        proc.kill()
        assert proc.wait(30) == -9 == proc.returncode
