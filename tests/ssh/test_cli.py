"""`eagle3-tui ls` and `eagle3-tui summary` on remote targets, run as a user would.

HOME points at a folder with its own .ssh/config and .ssh/known_hosts: the defaults a real
user relies on are the ones exercised (never the real ~/.ssh).
"""

import json
import os

import pytest
import torch

from tests.helpers.ssh import HOSTILE_NAMES, cli, pwned_markers
from tests.helpers.ssh_servers import free_port, known_hosts_line, write_client_files

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture
def server(sshd, keys):
    """The CLI runs against OpenSSH only: the library tests already cover both servers, and
    each CLI run is a fresh process that pays Python start-up (and torch, where it computes)."""
    from tests.helpers.ssh import Server

    return Server("openssh", sshd.port, keys, sshd)


async def test_ls_json_lines_in_natural_order(server, home, dataset):
    rc, out, err = await cli(home, "ls", f"box:{dataset}", "--json")
    assert rc == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["name"] for r in rows] == [
        "rows_0-2000", "rows_2000-4000", "rows_10000-12000", "vocab_mapping", "dead_link.pt", "notes.txt",
    ]
    assert set(rows[0]) == {"name", "kind", "size", "mtime"}
    assert rows[-1]["kind"] == "file" and rows[-1]["size"] == len("not a sample\n")


async def test_ls_hostile_names_one_per_line_and_nothing_runs(server, home, hostile):
    rc, out, err = await cli(home, "ls", f"box:{hostile}", "--json")
    assert rc == 0, err
    assert sorted(json.loads(line)["name"] for line in out.splitlines()) == sorted(HOSTILE_NAMES)
    rc, out, err = await cli(home, "ls", f"box:{hostile}")
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) == len(HOSTILE_NAMES)  # the newline in a name cannot break a row
    assert any(line.endswith("new\\nline.pt") for line in lines)
    assert any(line.endswith("latin1-\\xc3\\xa9\\xff.pt") or line.endswith("latin1-\\xe9\\xff.pt") for line in lines)
    assert pwned_markers(hostile, home) == []


async def test_summary_over_ssh_is_the_local_summary(server, home, dataset):
    from eagle3_tui.commands._options import to_json_ready
    from eagle3_tui.engines.read.stats import summarize_file

    path = f"{dataset}/rows_0-2000/data_1.ckpt"
    rc, remote_out, err = await cli(home, "summary", f"box:{path}", "--json")
    assert rc == 0, err
    remote = json.loads(remote_out)
    # what `eagle3-tui summary PATH --json` prints for the local file, computed in this process
    local = json.loads(json.dumps(to_json_ready(summarize_file(path))))
    assert remote.pop("computed") == "remote"
    assert remote.pop("path") == f"box:{path}" and local.pop("path") == path
    runtime = remote.pop("runtime")  # which Python and torch read it: the agent's on the box
    assert runtime["computed"] == "remote" and runtime["pickles"] == "loaded safely"
    assert runtime["torch"] == torch.__version__.split("+")[0] or runtime["torch"] == torch.__version__
    assert remote == local


async def test_summary_without_torch_on_the_box_says_so_and_computes_here(
    server, home, dataset, python_without_torch
):
    path = f"{dataset}/rows_0-2000/data_0.ckpt"
    env_python = ["--remote-python", python_without_torch]
    rc, out, err = await cli(home, "summary", f"box:{path}", "--json", *env_python)
    assert rc == 0, err
    assert json.loads(out)["computed"] == "local"
    assert err.count("no torch on box: computing locally") == 1


async def test_unknown_host_key_refused_with_the_fingerprint_then_accepted_on_request(server, home, dataset):
    known = home / ".ssh" / "known_hosts"
    known.write_text("")
    rc, out, err = await cli(home, "ls", f"box:{dataset}")
    assert rc == 1 and out == ""
    fingerprint = server.keys.host_key.get_fingerprint("sha256")
    assert f"host key unknown (ssh-ed25519 {fingerprint})" in err.splitlines()[0]
    assert known_hosts_line(server.port, server.keys.host_key) in err
    assert known.read_text() == ""

    rc, out, err = await cli(home, "ls", f"box:{dataset}", "--accept-new-host-key")
    assert rc == 0, err
    assert known.read_text() == known_hosts_line(server.port, server.keys.host_key) + "\n"


async def test_connection_refused_is_one_line_and_exit_1(keys, tmp_path):
    home = tmp_path / "home"
    port = free_port()
    config, _ = write_client_files(home / ".ssh", "box", port, keys)
    os.rename(config, home / ".ssh" / "config")
    rc, out, err = await cli(home, "ls", "box:/data")
    assert rc == 1
    assert err.strip().splitlines() == [f"eagle3-tui ls: 127.0.0.1:{port}: connection refused (no SSH server listening)"]
    rc, out, err = await cli(home, "summary", "box:/data/x.pt", "--json")
    assert rc == 1
    assert json.loads(out)["error"] == f"127.0.0.1:{port}: connection refused (no SSH server listening)"
