"""Host keys on port 22, the form most users have in known_hosts: the bare host name, no
[host]:port. A real asyncssh server listens on port 22 of a spare loopback address (127.0.0.N;
binding port 22 needs root, which CI and this machine have)."""

import os
import random

import asyncssh
import pytest
import pytest_asyncio

from eagle3_tui.sources.hostkeys import HostKeyError, HostKeyPrompt
from tests.helpers.ssh_servers import InProcessServer, known_hosts_line, write_client_files
from tests.ssh.test_hostkeys import box

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def on_22(keys):
    if os.geteuid() != 0:
        pytest.skip("port 22 needs root to listen on (CI runs as root)")
    for n in random.Random(os.getpid()).sample(range(2, 255), 20):  # another run may hold one
        try:
            server = await InProcessServer(keys, port=22, host=f"127.0.0.{n}").start()
        except OSError:
            continue
        yield server
        await server.stop()
        return
    pytest.fail("no loopback address had port 22 free")


def fingerprint(server) -> str:
    return server.keys.host_key.get_fingerprint("sha256")


async def test_a_bare_host_line_is_trusted_on_port_22(on_22, tmp_path):
    config, known = write_client_files(tmp_path, "box", 22, on_22.keys, host=on_22.host)
    assert open(known).read().startswith(f"{on_22.host} ssh-ed25519 ")  # no brackets, no port
    source = box(config, known)
    await source.connect()
    try:
        assert [e.name for e in await source.list_all("/")]  # logged in and listing
    finally:
        await source.close()


async def test_unknown_key_on_port_22_is_asked_for_and_saved_as_a_bare_host(on_22, tmp_path):
    config, known = write_client_files(tmp_path, "box", 22, on_22.keys, host=on_22.host, trusted=False)
    asked: list[HostKeyPrompt] = []

    async def yes(prompt):
        asked.append(prompt)
        return True

    source = box(config, known, confirm_host_key=yes)
    await source.connect()
    await source.close()
    assert [p.fingerprint_sha256 for p in asked] == [fingerprint(on_22)]
    assert f"ssh-keyscan -t ssh-ed25519 {on_22.host} " in asked[0].keyscan_command + " "  # no -p
    assert open(known).read() == known_hosts_line(22, on_22.keys.host_key, on_22.host) + "\n"
    again = box(config, known)  # and the saved line is what the next connection trusts
    await again.connect()
    await again.close()


async def test_changed_key_under_a_bare_host_line_is_refused(on_22, tmp_path):
    config, known = write_client_files(tmp_path, "box", 22, on_22.keys, host=on_22.host, trusted=False)
    impostor = asyncssh.generate_private_key("ssh-ed25519")
    before = f"{on_22.host} " + impostor.export_public_key().decode()
    open(known, "w").write(before)
    with pytest.raises(HostKeyError) as err:
        await box(config, known, accept_new_host_key=True).connect()
    assert err.value.changed and "HOST KEY CHANGED" in str(err.value)
    assert open(known).read() == before


async def test_a_bracketed_line_for_another_port_does_not_vouch_for_port_22(on_22, tmp_path):
    config, known = write_client_files(tmp_path, "box", 22, on_22.keys, host=on_22.host, trusted=False)
    open(known, "w").write(known_hosts_line(2222, on_22.keys.host_key, on_22.host) + "\n")
    with pytest.raises(HostKeyError) as err:
        await box(config, known).connect()
    assert "host key unknown" in str(err.value) and not err.value.changed
