"""Connection problems end in one clear line each (the UI shows the same words)."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import asyncssh
import pytest

from eagle3_tui.sources.base import SourceError
from eagle3_tui.sources.opener import open_source
from eagle3_tui.target import parse_target
from tests.helpers.ssh_servers import free_port, write_client_files

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def connect_error(config: str, known: str, target: str = "box:/") -> str:
    source = open_source(parse_target(target), ssh_config=config, known_hosts=known, remote_python=sys.executable)
    with pytest.raises(SourceError) as err:
        await source.connect()
    message = str(err.value)
    assert "\n" not in message
    return message


async def test_unknown_host(keys, tmp_path):
    config, known = write_client_files(tmp_path, "box", 22, keys)
    config_text = open(config).read().replace("HostName 127.0.0.1", "HostName no-such-host.invalid")
    open(config, "w").write(config_text)
    message = await connect_error(config, known)
    assert message.startswith("no-such-host.invalid: unknown host")


async def test_connection_refused(keys, tmp_path):
    port = free_port()  # nothing listens there
    config, known = write_client_files(tmp_path, "box", port, keys)
    assert await connect_error(config, known) == (
        f"127.0.0.1:{port}: connection refused (no SSH server listening)"
    )


async def test_timeout_when_the_far_side_never_speaks(keys, tmp_path):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    port = silent.getsockname()[1]
    try:
        config, known = write_client_files(tmp_path, "box", port, keys, extra="  ConnectTimeout 1\n")
        assert await connect_error(config, known) == f"127.0.0.1:{port}: timed out connecting"
    finally:
        silent.close()


async def test_authentication_failure(server, tmp_path):
    config, known = write_client_files(tmp_path, "box", server.port, server.keys)
    stranger = tmp_path / "stranger_key"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(stranger)
    text = open(config).read().replace(str(server.keys.client_key_path), str(stranger))
    open(config, "w").write(text)
    message = await connect_error(config, known)
    assert "authentication failed" in message and "@127.0.0.1" in message


async def test_remote_python_missing_is_said_once_and_listing_still_works(server, open_box, dataset):
    box = await open_box(str(dataset), remote_python="/opt/nowhere/python3")
    assert any("remote Python '/opt/nowhere/python3' not found" in s for s in box.statuses)
    assert [e.name for e in await box.list_all(str(dataset))][:2] == ["rows_0-2000", "rows_2000-4000"]


def _old_python(low: tuple[int, int], high: tuple[int, int]) -> tuple[str, str] | None:
    """(path, version) of an installed Python from `low` up to before `high`, searched on PATH
    and in pyenv's versions (the usual places an old Python lives), or None."""
    import glob

    names = [f"python{v}" for v in ("3.8", "3.7", "3.6", "2.7", "2")]
    candidates = [shutil.which(n) for n in names]
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates += sorted(glob.glob(f"{root}/versions/*/bin/python[23].[0-9]"))
    for path in filter(None, candidates):
        if not os.access(path, os.X_OK):
            continue
        probe = subprocess.run([path, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                               capture_output=True, text=True)
        version = probe.stdout.strip()
        if probe.returncode == 0 and low <= tuple(int(x) for x in version.split(".")[:2]) < high:
            return path, version
    return None


@pytest.mark.parametrize("series", ["3.x before 3.9", "2.x"])
async def test_an_old_remote_python_lists_or_falls_back_and_computes_here(server, open_box, dataset, series):
    found = _old_python((2, 0), (3, 0)) if series == "2.x" else _old_python((3, 0), (3, 9))
    if found is None:
        pytest.skip(f"no Python {series} on PATH or in pyenv: install one to run this test")
    python, version = found
    said = ("could not start the agent" if version.startswith("2.")
            else f"remote Python {version} on box is older than 3.9: computing locally")
    box = await open_box(str(dataset), remote_python=python)
    assert sum(said in s for s in box.statuses) == 1, box.statuses
    assert box.computed == "local"
    result = await box.summarize(f"{dataset}/rows_0-2000/data_0.ckpt")
    assert result["computed"] == "local" and "error" not in result


def _python_for_nobody() -> str | None:
    """A remote-python setting that runs the agent as user nobody (root reads everything)."""
    for python in (sys.executable, "/usr/bin/python3"):
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", "pass"]
        try:
            if subprocess.run(command, capture_output=True).returncode == 0:
                return " ".join(command[:-2])
        except FileNotFoundError:
            return None
    return None


@pytest.fixture
def guarded(tmp_path_factory):
    """A folder anyone may enter, holding a folder and a file only root may read."""
    root = Path(tempfile.mkdtemp(prefix="eagle3-guarded-", dir="/tmp"))
    os.chmod(root, 0o755)
    (root / "secret").mkdir(mode=0o700)
    (root / "secret" / "data_0.pt").write_bytes(b"x")
    yield root
    shutil.rmtree(root)


async def test_permission_denied_on_a_folder_is_one_line(server, open_box, guarded):
    as_nobody = _python_for_nobody()
    if as_nobody is None:
        pytest.skip("no Python that user nobody can run")
    box = await open_box(str(guarded), remote_python=as_nobody)
    assert [e.name for e in await box.list_all(str(guarded))] == ["secret"]
    with pytest.raises(SourceError) as err:
        await box.list_all(f"{guarded}/secret")
    assert str(err.value) == f"box:{guarded}/secret: permission denied"
    with pytest.raises(SourceError) as err:
        await box.stat(f"{guarded}/secret/data_0.pt")
    assert str(err.value) == f"box:{guarded}/secret/data_0.pt: permission denied"
