"""Real SSH servers on loopback (OpenSSH sshd and asyncssh in-process) and datasets to serve
(a pytest plugin: tests/conftest.py loads it for every area).

Every dataset folder is fingerprinted when made and checked again at the end of the session:
the tool must never write where it reads.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_asyncio
import torch

from eagle3_tui.sources.opener import open_source
from eagle3_tui.target import parse_target
from tests.helpers import warm_cli
from tests.helpers.ssh_servers import InProcessServer, Keys, Sshd, find_sshd, write_client_files

T, H, K = 24, 32, 3

# Each would run code if it ever reached a shell: the command substitutions touch a marker.
HOSTILE_NAMES = [
    "with space.pt",
    "it's.pt",
    'dq"uote.pt',
    "$(touch PWNED_dollar).pt",
    "`touch PWNED_backtick`.pt",
    "semi;touch PWNED_semi.pt",
    "new\nline.pt",
    "-rf.pt",
    os.fsdecode(b"latin1-\xe9\xff.pt"),  # not UTF-8: a surrogate-escaped name
]


def pwned_markers(*folders: Path) -> list[str]:
    """Marker files a hostile name would have created had it reached a shell."""
    places = [Path.home(), Path.cwd(), *folders]
    return [str(p) for place in places for p in place.glob("PWNED*")]


def write_sample(path: Path, seed: int, t: int = T, h: int = H, k: int = K, pad: int = 0) -> None:
    """A SpecForge-style training sample (FORMATS.md, training side 1)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 1000, (t,), generator=g)
    mask = torch.ones(t, dtype=torch.int64)
    mask[:4] = 0
    if pad:
        ids[-pad:] = 0
        mask[-pad:] = 0
    aux = torch.cat([torch.randn(t, h, generator=g) * (i + 1) for i in range(k)], -1)
    torch.save(
        {
            "input_ids": ids,
            "loss_mask": mask,
            "hidden_state": torch.randn(1, t, h, generator=g),
            "aux_hidden_state": aux.unsqueeze(0),
        },
        path,
    )


def fingerprint(folder: Path) -> dict[bytes, tuple]:
    """Every path under folder -> (mode, size, mtime_ns, sha256 of content for non-empty files)."""
    out = {}
    for root, dirs, files in os.walk(os.fsencode(folder)):
        for name in dirs + files:
            p = os.path.join(root, name)
            st = os.lstat(p)
            digest = None
            if stat.S_ISREG(st.st_mode) and st.st_size:
                with open(p, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            out[p] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out


@pytest.fixture(scope="session")
def untouched():
    """Register folders to check, at session end, for being byte-identical to when made."""
    watched: dict[Path, dict] = {}
    yield lambda folder: watched.setdefault(folder, fingerprint(folder))
    changed = [str(f) for f, before in watched.items() if fingerprint(f) != before]
    assert not changed, f"the tool wrote into dataset folders: {changed}"


@pytest.fixture(scope="session")
def dataset(tmp_path_factory, untouched) -> Path:
    root = tmp_path_factory.mktemp("dataset")
    shard = root / "rows_0-2000"
    shard.mkdir()
    for i in (0, 1, 2, 10):
        write_sample(shard / f"data_{i}.ckpt", seed=i, pad=2 if i == 1 else 0)
    (root / "rows_10000-12000").mkdir()
    (root / "rows_2000-4000").mkdir()
    (root / "vocab_mapping").mkdir()
    torch.save({"d2t": torch.arange(8), "t2d": torch.ones(16, dtype=torch.bool)}, root / "vocab_mapping" / "vocab_mapping.pt")
    (root / "notes.txt").write_text("not a sample\n")
    os.symlink("nowhere.pt", root / "dead_link.pt")
    untouched(root)
    return root


@pytest.fixture(scope="session")
def hostile(tmp_path_factory, untouched) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    for i, name in enumerate(HOSTILE_NAMES):
        write_sample(root / name, seed=100 + i)
    untouched(root)
    return root


@pytest.fixture(scope="session")
def big_folder(tmp_path_factory, untouched) -> Path:
    """20,000 files data_0.ckpt .. data_19999.ckpt, created in random order, plus 3 shard dirs."""
    root = tmp_path_factory.mktemp("big")
    order = list(range(20_000))
    random.Random(7).shuffle(order)
    for i in order:
        os.close(os.open(root / f"data_{i}.ckpt", os.O_CREAT | os.O_WRONLY, 0o644))
    for d in ("rows_10000-12000", "rows_0-2000", "rows_2000-4000"):
        (root / d).mkdir()
    untouched(root)
    return root


@pytest.fixture(scope="session")
def python_without_torch(tmp_path_factory) -> str:
    """A real remote Python that lacks torch: a bare venv."""
    venv = tmp_path_factory.mktemp("venv-no-torch")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    probe = subprocess.run([python, "-c", "import torch"], capture_output=True)
    assert probe.returncode != 0, "the bare venv can import torch; the fallback test would prove nothing"
    return python


@pytest.fixture(scope="session")
def keys(tmp_path_factory) -> Keys:
    return Keys(tmp_path_factory.mktemp("ssh-keys"))


REQUIRE_SSHD = "EAGLE3_TUI_REQUIRE_SSHD"


def require_sshd() -> None:
    """Skip a test that needs OpenSSH's sshd when it is not installed, saying so; under
    EAGLE3_TUI_REQUIRE_SSHD=1 (set by .ci/run) a missing sshd fails instead, so CI runs them all."""
    if find_sshd() is not None:
        return
    message = "OpenSSH sshd not found (/usr/sbin/sshd or PATH): install openssh-server to run the OpenSSH tests"
    if os.environ.get(REQUIRE_SSHD) == "1":
        pytest.fail(f"{message} ({REQUIRE_SSHD}=1 forbids skipping them)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def sshd(tmp_path_factory, keys):
    require_sshd()
    server = Sshd(tmp_path_factory.mktemp("sshd"), keys).start()
    yield server
    server.stop()


class Server:
    """One running SSH server of either kind, as the tests see it."""

    def __init__(self, kind: str, port: int, keys: Keys, impl):
        self.kind = kind
        self.port = port
        self.keys = keys
        self.impl = impl

    def drop_connections(self) -> None:
        self.impl.drop_connections()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def inprocess_server(keys):
    impl = await InProcessServer(keys).start()
    yield impl
    await impl.stop()


@pytest.fixture(params=["openssh", "asyncssh"])
def server(request, keys):
    if request.param == "openssh":
        impl = request.getfixturevalue("sshd")
    else:
        impl = request.getfixturevalue("inprocess_server")
    return Server(request.param, impl.port, keys, impl)


@pytest.fixture
def client_files(server, tmp_path):
    """(ssh_config, known_hosts) for Host alias "box" -> the server; the server's key is trusted."""
    return write_client_files(tmp_path / "client", "box", server.port, server.keys)


async def _open(config: str, known: str, path: str, opened: list, **options):
    statuses: list[str] = []
    if "remote_python" not in options:
        options["remote_python"] = warm_cli.warm_box_python()
    source = open_source(
        parse_target(f"box:{path}"), ssh_config=config, known_hosts=known, on_status=statuses.append, **options
    )
    source.statuses = statuses
    opened.append(source)
    await source.connect()
    await source.agent_ready()  # these tests look at what the agent's start said and decided
    return source


@pytest_asyncio.fixture(loop_scope="session")
async def open_box(client_files):
    """open_box(path, **options) -> a fresh connected SshSource for box:path, closed after the test."""
    opened: list = []
    yield lambda path="/", **options: _open(*client_files, path, opened, **options)
    for source in opened:
        await source.close()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def _box_pool(tmp_path_factory):
    pool: dict = {}
    yield pool
    for source in pool.values():
        await source.close()


@pytest_asyncio.fixture(loop_scope="session")
async def shared_box(server, _box_pool, tmp_path_factory):
    """shared_box(remote_python=...) -> a connected source reused across tests (one torch import
    per agent for the whole session). Only for tests that do not care about its history."""

    async def get(remote_python: str | None = None):
        remote_python = remote_python or warm_cli.warm_box_python()
        key = (server.kind, remote_python)
        if key not in _box_pool:
            folder = tmp_path_factory.mktemp(f"client-{server.kind}")
            config, known = write_client_files(folder, "box", server.port, server.keys)
            _box_pool[key] = await _open(config, known, "/", [], remote_python=remote_python)
        return _box_pool[key]

    return get


@pytest_asyncio.fixture
async def box(tmp_path_factory):
    """asyncssh's server in the test's own event loop (the TUI tests run the app in it)."""
    keys = Keys(tmp_path_factory.mktemp("ui-ssh-keys"))
    server = await InProcessServer(keys).start()
    yield server
    await server.stop()


ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(server, tmp_path):
    """A HOME with its own .ssh/config and .ssh/known_hosts for Host "box" -> the server (the
    defaults a real user relies on, never the real ~/.ssh)."""
    home = tmp_path / "home"
    ssh = home / ".ssh"
    config, known = write_client_files(ssh, "box", server.port, server.keys)
    os.rename(config, ssh / "config")
    return home


def _user_env(home: Path) -> dict[str, str]:
    """The environment of a user whose HOME is `home` (its .ssh config), with no ssh-agent."""
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("SSH_AUTH_SOCK", None)
    return env


async def cli(home: Path, *args: str) -> tuple[int, str, str]:
    """Run `python -m eagle3_tui ARGS...` with HOME=`home`, as a user would: (exit code, out, err).
    Forked from the worker's warm interpreter (tests/helpers/warm_cli.py): these tests are about
    the command over SSH, not about how python starts."""
    env = _user_env(home)
    if "--remote-python" not in args:
        args = (*args, "--remote-python", warm_cli.warm_box_python())
    done = await asyncio.to_thread(warm_cli.run, [sys.executable, "-m", "eagle3_tui", *args], env=env,
                                   cwd=str(home), timeout=600)
    return done.returncode, done.stdout.decode("utf-8", "surrogateescape"), done.stderr.decode("utf-8", "replace")


def write_shards(root: Path, files: int, shards: int = 3) -> Path:
    """`files` small samples in `shards` SpecForge-named shard folders under root."""
    per = files // shards
    for sh in range(shards):
        shard = root / f"rows_{sh * per}-{(sh + 1) * per}"
        shard.mkdir()
        for i in range(sh * per, (sh + 1) * per):
            write_sample(shard / f"data_{i}.ckpt", seed=i)
    return root


@pytest.fixture
def own_box(tmp_path, keys):
    """A sshd of this test's own (the test kills it or its sessions) and a HOME whose
    ~/.ssh/config names it `box`."""
    require_sshd()
    (tmp_path / "sshd").mkdir()
    sshd = Sshd(tmp_path / "sshd", keys).start()
    home = tmp_path / "home"
    config, _ = write_client_files(home / ".ssh", "box", sshd.port, keys)
    os.rename(config, home / ".ssh" / "config")
    yield sshd, home
    sshd.stop()


async def scan_box_json(home: Path, folder: Path, *, workers: int, after_lines: int, then,
                        backoff: tuple[float, ...] | None = None,
                        remote_python: str | None = None) -> tuple[int, list[dict], str]:
    """Run `scan box:folder --json --workers N` as a user would (HOME with the box's config, no
    ssh-agent; forked from the warm interpreter, as cli()); call then() once `after_lines` records
    came. Returns (exit code, every stdout line decoded, stderr). `backoff`: the seconds before
    each reconnection instead of SshSession's (as many tries, less waiting). `remote_python`: the
    agent's (sys.executable for one started cold, as sshd's own child); a warm one by default."""
    import json

    env = _user_env(home)
    args = ["scan", f"box:{folder}", "--json", "--workers", str(workers),
            "--remote-python", remote_python or warm_cli.warm_box_python()]
    if backoff is None:
        argv = [sys.executable, "-m", "eagle3_tui", *args]
    else:
        argv = [sys.executable, "-c", "import sys\n"
                "from eagle3_tui.sources.ssh_session import SshSession\n"
                f"SshSession.backoff = {tuple(backoff)!r}\n"
                "from eagle3_tui.cli import main\n"
                "raise SystemExit(main(sys.argv[1:]))", *args]
    loop = asyncio.get_running_loop()
    out_r, out_w = os.pipe()
    with open(os.devnull, "rb") as stdin, tempfile.TemporaryFile() as stderr:
        try:
            proc = warm_cli.Popen(argv, stdin=stdin, stdout=out_w, stderr=stderr, env=env, cwd=str(home))
        finally:
            os.close(out_w)  # the child has its own copy: stdout ends when the child does
        try:
            out = asyncio.StreamReader()
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(out), os.fdopen(out_r, "rb"))
            lines = []
            while line := await asyncio.wait_for(out.readline(), 300):
                lines.append(json.loads(line))
                if len(lines) == after_lines:
                    then()
            code = await asyncio.to_thread(proc.wait, 300)
        finally:
            proc.kill()  # a no-op once it ended; a test that failed midway leaves no scan running
        stderr.seek(0)
        return code, lines, stderr.read().decode("utf-8", "replace")

