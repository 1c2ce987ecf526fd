"""`scan box:/data` when the box's SSH session is killed in the middle (issue 21.11): the scan
reconnects and resumes without reading again what it has, and when the box stays away the JSON
contract still holds: the last line is the summary and the findings of what was read, marked
interrupted. Real OpenSSH sshd on loopback, the CLI run as a user would."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.helpers.ssh import require_sshd, write_sample
from tests.helpers.ssh_servers import Sshd, write_client_files

pytestmark = pytest.mark.asyncio(loop_scope="session")

ROOT = Path(__file__).resolve().parents[2]
FILES = 1200


@pytest.fixture(scope="module")
def many(tmp_path_factory, untouched) -> Path:
    root = tmp_path_factory.mktemp("many")
    for s in range(3):
        shard = root / f"rows_{s * 400}-{(s + 1) * 400}"
        shard.mkdir()
        for i in range(s * 400, (s + 1) * 400):
            write_sample(shard / f"data_{i}.ckpt", seed=i)
    untouched(root)
    return root


@pytest.fixture
def box(tmp_path, keys):
    """A sshd of this test's own (the test kills it) and a HOME whose ~/.ssh/config names it."""
    require_sshd()
    (tmp_path / "sshd").mkdir()
    sshd = Sshd(tmp_path / "sshd", keys).start()
    home = tmp_path / "home"
    config, _ = write_client_files(home / ".ssh", "box", sshd.port, keys)
    os.rename(config, home / ".ssh" / "config")
    yield sshd, home
    sshd.stop()


async def scan_and(home: Path, folder: Path, after_lines: int, then) -> tuple[int, list[dict], str]:
    """Run `scan box:folder --json`; call then() once `after_lines` records came. Returns
    (exit code, every stdout line decoded, stderr)."""
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("SSH_AUTH_SOCK", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "eagle3_tui", "scan", f"box:{folder}", "--json", "--workers", "1",
        "--remote-python", sys.executable,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=str(home))
    errs = asyncio.ensure_future(proc.stderr.read())
    lines = []
    while line := await asyncio.wait_for(proc.stdout.readline(), 300):
        lines.append(json.loads(line))
        if len(lines) == after_lines:
            then()
    await asyncio.wait_for(proc.wait(), 300)
    return proc.returncode, lines, (await errs).decode("utf-8", "replace")


async def test_a_session_killed_mid_scan_is_resumed_without_reading_a_file_twice(box, many):
    sshd, home = box
    rc, lines, err = await scan_and(home, many, 100, sshd.drop_connections)
    *records, last = lines
    assert rc == 0, err
    assert "resuming after" in err and "(1/5)" in err, err
    paths = [r["path"] for r in records]
    assert len(paths) == len(set(paths)) == FILES, "every file once, none twice"
    assert last["summary"]["files"] == FILES and last["summary"]["interrupted"] is False
    assert isinstance(last["findings"], list)


async def test_a_box_that_stays_away_still_gets_the_summary_and_findings_of_what_was_read(box, many):
    sshd, home = box
    rc, lines, err = await scan_and(home, many, 100, sshd.stop)
    *records, last = lines
    assert rc == 2, err
    assert "gave up after 5 reconnects" in err and "Traceback" not in err, err
    assert set(last) >= {"summary", "findings"}
    s = last["summary"]
    assert s["interrupted"] is True and "connection lost" in s["connection_lost"]
    assert 100 <= s["files"] == len(records) < FILES
    assert isinstance(last["findings"], list)
