"""`scan box:/data` when the box's SSH session is killed in the middle (issue 21.11): the scan
reconnects and resumes without reading again what it has, and when the box stays away the JSON
contract still holds: the last line is the summary and the findings of what was read, marked
interrupted. Real OpenSSH sshd on loopback, the CLI run as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.ssh import scan_box_json, write_shards

pytestmark = pytest.mark.asyncio(loop_scope="session")

FILES = 1200


@pytest.fixture(scope="module")
def many(tmp_path_factory, untouched) -> Path:
    root = write_shards(tmp_path_factory.mktemp("many"), FILES)
    untouched(root)
    return root


async def test_a_session_killed_mid_scan_is_resumed_without_reading_a_file_twice(own_box, many):
    sshd, home = own_box
    rc, lines, err = await scan_box_json(home, many, workers=1, after_lines=100, then=sshd.drop_connections)
    *records, last = lines
    assert rc == 0, err
    assert "resuming after" in err and "(1/5)" in err, err
    paths = [r["path"] for r in records]
    assert len(paths) == len(set(paths)) == FILES, "every file once, none twice"
    assert last["summary"]["files"] == FILES and last["summary"]["interrupted"] is False
    assert isinstance(last["findings"], list)


async def test_a_box_that_stays_away_still_gets_the_summary_and_findings_of_what_was_read(own_box, many):
    sshd, home = own_box
    # SshSession's five tries, a tenth of its waiting (15 s of sleep is not what this test is about)
    rc, lines, err = await scan_box_json(home, many, workers=1, after_lines=100, then=sshd.stop,
                                         backoff=(0.0, 0.1, 0.2, 0.4, 0.8))
    *records, last = lines
    assert rc == 2, err
    assert "gave up after 5 reconnects" in err and "Traceback" not in err, err
    assert set(last) >= {"summary", "findings"}
    s = last["summary"]
    assert s["interrupted"] is True and "connection lost" in s["connection_lost"]
    assert 100 <= s["files"] == len(records) < FILES
    assert isinstance(last["findings"], list)
