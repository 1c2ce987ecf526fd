"""`eagle3-tui compare box:A box:B` against real SSH servers (OpenSSH sshd and asyncssh)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.demo_world import demo_once
from tests.helpers.ssh import cli


@pytest.fixture(scope="session")
def demo(tmp_path_factory, untouched):
    return demo_once(tmp_path_factory, untouched)

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_compare_over_ssh_is_the_local_compare(server, home, demo):  # noqa: F811
    d, _ = demo
    a, b = f"{d}/train/rows_0-2000/data_10.ckpt", f"{d}/infer/fault_permuted_s10.pt"
    rc, remote_out, err = await cli(home, "compare", f"box:{a}", f"box:{b}", "--json")
    assert rc == 1, err
    rc, local_out, err = await cli(home, "compare", a, b, "--json")
    assert rc == 1, err
    remote, local = json.loads(remote_out), json.loads(local_out)
    assert remote.pop("computed") == "remote" and local.pop("computed") == "local"
    assert remote["a"].pop("path") == f"box:{a}" and local["a"].pop("path") == a
    assert remote["b"].pop("path") == f"box:{b}" and local["b"].pop("path") == b
    assert remote == local  # the same numbers and findings, computed on the box


async def test_compare_over_ssh_exit_2_for_a_missing_file_or_two_machines(server, home, demo):  # noqa: F811
    d, _ = demo
    a = f"{d}/train/rows_0-2000/data_10.ckpt"
    rc, out, err = await cli(home, "compare", f"box:{a}", f"box:{d}/nope.pt")
    assert rc == 2 and "nope.pt: error: no such file" in out, err
    rc, out, err = await cli(home, "compare", f"box:{a}", f"{d}/infer/ok_bf16_s0.pt")
    assert rc == 2 and "same machine" in err
