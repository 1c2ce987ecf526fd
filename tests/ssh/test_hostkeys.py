"""Host keys: an unknown key needs the user's yes, a changed key is always refused, and a
configuration that turns checking off is refused."""

import getpass
import os
import shutil
import subprocess
import sys
import time

import asyncssh
import pytest

from eagle3_tui.sources.hostkeys import HostKeyError, HostKeyPrompt
from eagle3_tui.sources.opener import open_source
from eagle3_tui.target import parse_target
from tests.helpers.ssh_servers import known_hosts_line, write_client_files

pytestmark = pytest.mark.asyncio(loop_scope="session")


def box(config, known, **options):
    return open_source(
        parse_target("box:/"), ssh_config=config, known_hosts=known, remote_python=sys.executable, **options
    )


def fingerprint(server) -> str:
    return server.keys.host_key.get_fingerprint("sha256")


async def test_unknown_key_is_refused_without_confirmation(server, tmp_path):
    config, known = write_client_files(tmp_path, "box", server.port, server.keys, trusted=False)
    source = box(config, known)
    with pytest.raises(HostKeyError) as err:
        await source.connect()
    message = str(err.value)
    assert "host key unknown" in message and fingerprint(server) in message and "\n" not in message
    prompt = err.value.prompt
    assert prompt.fingerprint_sha256 == fingerprint(server)
    assert prompt.known_hosts_line.startswith(f"[127.0.0.1]:{server.port} ssh-ed25519 ")
    assert f"ssh-keyscan -p {server.port} -t ssh-ed25519 127.0.0.1" in prompt.keyscan_command
    assert open(known).read() == ""  # nothing was trusted behind the user's back


async def test_confirmed_key_is_remembered(server, tmp_path):
    config, known = write_client_files(tmp_path, "box", server.port, server.keys, trusted=False)
    asked: list[HostKeyPrompt] = []

    async def yes(prompt: HostKeyPrompt) -> bool:
        asked.append(prompt)
        return True

    source = box(config, known, confirm_host_key=yes)
    await source.connect()
    await source.close()
    assert [p.fingerprint_sha256 for p in asked] == [fingerprint(server)]
    assert open(known).read().strip() == asked[0].known_hosts_line
    # the next connection needs no question
    again = box(config, known)
    await again.connect()
    await again.close()


async def test_declined_key_is_refused(server, tmp_path):
    config, known = write_client_files(tmp_path, "box", server.port, server.keys, trusted=False)

    async def no(prompt):
        return False

    with pytest.raises(HostKeyError):
        await box(config, known, confirm_host_key=no).connect()
    assert open(known).read() == ""


async def test_accept_new_host_key_trusts_a_first_seen_key(server, tmp_path):
    config, known = write_client_files(tmp_path, "box", server.port, server.keys, trusted=False)
    source = box(config, known, accept_new_host_key=True)
    await source.connect()
    await source.close()
    assert fingerprint(server).removeprefix("SHA256:") not in open(known).read()  # the key, not its hash
    assert open(known).read().startswith(f"[127.0.0.1]:{server.port} ssh-ed25519 ")


async def test_changed_key_is_refused_even_when_the_user_would_say_yes(server, tmp_path):
    config, known = write_client_files(tmp_path, "box", server.port, server.keys, trusted=False)
    impostor = asyncssh.generate_private_key("ssh-ed25519")
    before = f"[127.0.0.1]:{server.port} " + impostor.export_public_key().decode()
    open(known, "w").write(before)
    asked = []

    async def yes(prompt):
        asked.append(prompt)
        return True

    with pytest.raises(HostKeyError) as err:
        await box(config, known, accept_new_host_key=True, confirm_host_key=yes).connect()
    assert err.value.changed
    assert "HOST KEY CHANGED" in str(err.value) and fingerprint(server) in str(err.value)
    assert asked == []
    assert open(known).read() == before


async def test_user_known_hosts_file_none_is_refused(server, tmp_path):
    config, known = write_client_files(
        tmp_path, "box", server.port, server.keys, extra="  UserKnownHostsFile none\n"
    )
    with pytest.raises(HostKeyError) as err:
        await box(config, None, accept_new_host_key=True).connect()
    assert "UserKnownHostsFile none" in str(err.value)


async def test_config_alias_user_port_and_identity_come_from_ssh_config(server, tmp_path):
    # Nothing but the alias on the command line: HostName, Port, User and IdentityFile are the config's.
    config, known = write_client_files(tmp_path, "gpu-box", server.port, server.keys)
    source = open_source(parse_target("gpu-box:/"), ssh_config=config, known_hosts=known)
    await source.connect()
    try:
        assert source.where.endswith(f"@127.0.0.1:{server.port}")
    finally:
        await source.close()


async def test_proxyjump_from_ssh_config(sshd, keys, tmp_path, dataset):
    # gpu-box is reached through "jump" (the same sshd): both hops use this config and its keys,
    # and each hop's host key is checked against its known_hosts.
    config, known = write_client_files(tmp_path, "jump", sshd.port, keys, extra=f"  UserKnownHostsFile {tmp_path}/known_hosts\n")
    with open(config, "a") as f:
        f.write(
            f"Host gpu-box\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {getpass.getuser()}\n"
            f"  IdentityFile {keys.client_key_path}\n  IdentitiesOnly yes\n  ProxyJump jump\n"
        )
    source = open_source(parse_target(f"gpu-box:{dataset}"), ssh_config=config, known_hosts=known,
                         remote_python=sys.executable)
    sessions_before = len(sshd.session_pids())
    await source.connect()
    try:
        assert [e.name for e in await source.list_all(str(dataset))][0] == "rows_0-2000"
        assert len(sshd.session_pids()) - sessions_before == 2  # one login for the jump, one for gpu-box
    finally:
        await source.close()


@pytest.fixture
def ssh_agent(tmp_path, keys, monkeypatch):
    """A real ssh-agent holding the client key, as a user's desktop session would run it."""
    if shutil.which("ssh-agent") is None or shutil.which("ssh-add") is None:
        pytest.skip("OpenSSH's ssh-agent is not installed: install openssh-client")
    sock = tmp_path / "agent.sock"
    proc = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL)
    for _ in range(200):
        if sock.exists():
            break
        time.sleep(0.01)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
    subprocess.run(["ssh-add", "-q", str(keys.client_key_path)], check=True, env={**os.environ})
    yield sock
    proc.terminate()
    proc.wait()


async def test_keys_come_from_ssh_agent_and_agent_forwarding_stays_off(sshd, keys, ssh_agent, tmp_path):
    # No IdentityFile: the login can only succeed through the agent. ForwardAgent yes is ignored.
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host box\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {getpass.getuser()}\n  ForwardAgent yes\n"
    )
    known = tmp_path / "known_hosts"
    known.write_text(known_hosts_line(sshd.port, keys.host_key) + "\n")
    source = open_source(parse_target("box:/"), ssh_config=str(config), known_hosts=str(known),
                         remote_python=sys.executable)
    await source.connect()
    try:
        remote_env = await source._conn.run("printenv SSH_AUTH_SOCK || true")
        assert remote_env.stdout.strip() == ""  # sshd sets it only when the agent is forwarded
    finally:
        await source.close()
