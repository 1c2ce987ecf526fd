"""`eagle3-tui pair box:CAPTURE box:DATASET` against real SSH servers (OpenSSH sshd and asyncssh):
the capture is read and the dataset scanned on the box (the agent), the ranking is the local one,
and a second pairing reads no sample there."""

from __future__ import annotations

import json

import pytest

from eagle3_tui.dataset.pair import pair_capture
from tests.helpers.demo_world import demo_once
from tests.helpers.pair import dataset_of, demo_pairs
from tests.helpers.ssh import cli

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture(scope="session")
def demo(tmp_path_factory, untouched):
    return demo_once(tmp_path_factory, untouched, drafter=True)[0]


async def test_every_demo_capture_pairs_on_the_box(server, shared_box, demo):
    box = await shared_box()
    for capture, sample, has_ids in demo_pairs(demo):
        folder, inside = dataset_of(sample)
        result = await pair_capture(box, f"{demo}/{capture}", f"{demo}/{folder}")
        assert result["computed"] == "remote", result
        best = result["matches"][0]
        assert (best["path"], best["how"]) == (inside, "ids" if has_ids else "states"), (capture, result["matches"][:3])


async def test_pair_over_ssh_is_the_local_pair_and_a_second_one_reads_nothing(server, home, demo):
    capture, train = f"{demo}/infer/fault_permuted_s10.pt", f"{demo}/train"
    rc, out, err = await cli(home, "pair", f"box:{capture}", f"box:{train}", "--json")
    assert rc == 0, err
    remote = json.loads(out)
    assert remote["capture"] == f"box:{capture}" and remote["files_read"] == 24
    rc, out, err = await cli(home, "pair", f"box:{capture}", train, "--json")  # a bare path: on the box too
    again = json.loads(out)
    assert rc == 0 and again["files_read"] == 0 and again["matches"] == remote["matches"], err
    rc, out, err = await cli(home, "pair", capture, train, "--json")
    local = json.loads(out)
    assert local["computed"] == "local" and remote["computed"] == "remote"
    assert local["matches"] == remote["matches"]
    assert local["matches"][0]["path"] == "rows_0-2000/data_10.ckpt"


async def test_accept_ids_from_runs_on_the_box(server, home, demo):
    capture, train = f"{demo}/infer/fault_permuted_s10.pt", f"{demo}/train/rows_0-2000/data_10.ckpt"
    rc, out, err = await cli(home, "accept", f"box:{capture}", "--drafter", f"{demo}/drafter",
                             "--ids-from", f"box:{train}", "--order", "1,2,0", "--json")
    assert rc == 0, err
    r = json.loads(out)
    assert r["computed"] == "remote" and r["ids_from"] == train and r["top1"] > 0.5
