"""Real SSH servers on 127.0.0.1 for tests and benchmarks: OpenSSH sshd and asyncssh in-process.

Both serve this machine's own file system (no chroot), so a path means the same thing over
SFTP, over exec and locally. Logins are as the current user (root here and in CI) with a key
made for the run.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh

SSHD = "/usr/sbin/sshd"


def find_sshd() -> str | None:
    """OpenSSH's sshd: where Debian puts it, else on PATH; None when it is not installed.
    EAGLE3_TUI_TEST_SSHD names another binary (the fresh-machine test points it nowhere)."""
    chosen = os.environ.get("EAGLE3_TUI_TEST_SSHD")
    if chosen is not None:
        return chosen if os.access(chosen, os.X_OK) else None
    if os.access(SSHD, os.X_OK):
        return SSHD
    return shutil.which("sshd", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"]))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_banner(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                if s.recv(4).startswith(b"SSH-"):
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"no SSH server answered on port {port}")
        time.sleep(0.02)


@dataclass
class Keys:
    """Host and client keys written under `folder`."""

    folder: Path
    host_key: asyncssh.SSHKey = field(init=False)
    client_key: asyncssh.SSHKey = field(init=False)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.host_key = asyncssh.generate_private_key("ssh-ed25519")
        self.client_key = asyncssh.generate_private_key("ssh-ed25519")
        self.host_key.write_private_key(self.host_key_path)
        self.client_key.write_private_key(self.client_key_path)
        os.chmod(self.host_key_path, 0o600)
        os.chmod(self.client_key_path, 0o600)
        self.authorized_keys_path.write_bytes(self.client_key.export_public_key())

    @property
    def host_key_path(self) -> Path:
        return self.folder / "host_ed25519"

    @property
    def client_key_path(self) -> Path:
        return self.folder / "client_ed25519"

    @property
    def authorized_keys_path(self) -> Path:
        return self.folder / "authorized_keys"


def known_hosts_line(port: int, key: asyncssh.SSHKey, host: str = "127.0.0.1") -> str:
    """The line OpenSSH writes: the bare host on port 22, [host]:port on any other."""
    name = host if port == 22 else f"[{host}]:{port}"
    return f"{name} " + key.export_public_key().decode().strip()


def write_client_files(folder: Path, alias: str, port: int, keys: Keys, *, trusted: bool = True,
                       extra: str = "", host: str = "127.0.0.1") -> tuple[str, str]:
    """A per-test ssh config (Host alias -> 127.0.0.1:port) and known_hosts. Returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "ssh_config"
    config.write_text(
        f"Host {alias}\n"
        f"  HostName {host}\n"
        f"  Port {port}\n"
        f"  User {getpass.getuser()}\n"
        f"  IdentityFile {keys.client_key_path}\n"
        f"  IdentitiesOnly yes\n"
        f"{extra}"
    )
    known = folder / "known_hosts"
    known.write_text(known_hosts_line(port, keys.host_key, host) + "\n" if trusted else "")
    return str(config), str(known)


class Sshd:
    """OpenSSH sshd in the foreground on a free loopback port."""

    def __init__(self, folder: Path, keys: Keys):
        self.folder = folder
        self.keys = keys
        self.port = free_port()
        self.config_path = folder / "sshd_config"
        self.config_path.write_text(
            f"Port {self.port}\n"
            "ListenAddress 127.0.0.1\n"
            f"HostKey {keys.host_key_path}\n"
            "PidFile none\n"
            f"AuthorizedKeysFile {keys.authorized_keys_path}\n"
            "PermitRootLogin yes\n"
            "PubkeyAuthentication yes\n"
            "PasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\n"
            "StrictModes no\n"
            "UsePAM no\n"
            "MaxStartups 100\n"
            "MaxSessions 100\n"
            "Subsystem sftp internal-sftp\n"
            "LogLevel ERROR\n"
            # a login's environment is sshd's own, not the test worker's: the suite's one torch
            # thread a process (tests/conftest.py) reaches the box's agents only this way
            "SetEnv OMP_NUM_THREADS=1\n"
        )
        self.proc: subprocess.Popen | None = None

    def start(self) -> Sshd:
        binary = find_sshd()
        if binary is None:
            raise RuntimeError("OpenSSH sshd is not installed")
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.proc = subprocess.Popen(
            [binary, "-D", "-e", "-f", str(self.config_path)],
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder / "sshd.log", "ab"),
        )
        wait_for_banner(self.port)
        return self

    def session_pids(self) -> list[int]:
        """The per-connection sshd processes this server forked (children of our sshd)."""
        assert self.proc is not None
        children = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    # pid (comm) state ppid ...: comm may hold spaces, so split after its ")"
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == self.proc.pid:
                children.append(int(entry))
        return children

    def drop_connections(self) -> None:
        """Kill every open session, as a crash or reboot of the far side would; the listener stays."""
        for pid in self.session_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        if self.proc is None:
            return
        self.drop_connections()
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.proc = None


class _ExecServer(asyncssh.SSHServer):
    pass


async def _run_command(process: asyncssh.SSHServerProcess) -> None:
    """Run the client's command with /bin/sh like sshd does, copying stdin/stdout/stderr to EOF."""
    child = await asyncio.create_subprocess_shell(
        process.command or "true",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=os.path.expanduser("~"),
        start_new_session=True,
    )

    async def feed() -> None:
        try:
            while True:
                data = await process.stdin.read(65536)
                if not data:
                    break
                child.stdin.write(data)
                await child.stdin.drain()
        except (asyncssh.Error, OSError):
            pass
        finally:
            child.stdin.close()

    async def pump(src, dst) -> None:
        while True:
            data = await src.read(65536)
            if not data:
                return
            dst.write(data)
            await dst.drain()

    feeder = asyncio.create_task(feed())
    try:
        await asyncio.gather(pump(child.stdout, process.stdout), pump(child.stderr, process.stderr))
        rc = await child.wait()
        process.exit(rc if rc >= 0 else 255)
    except (asyncssh.Error, OSError):
        pass
    finally:
        feeder.cancel()
        if child.returncode is None:
            child.kill()
            await child.wait()


class InProcessServer:
    """asyncssh's server (SFTP + exec) in the running event loop."""

    def __init__(self, keys: Keys, port: int = 0, host: str = "127.0.0.1"):
        self.keys = keys
        self.port = port
        self.host = host
        self._server: asyncssh.SSHAcceptor | None = None
        self._conns: list[asyncssh.SSHServerConnection] = []

    async def start(self) -> InProcessServer:
        conns = self._conns

        class Tracking(_ExecServer):
            def connection_made(self, conn):
                conns.append(conn)

        self._server = await asyncssh.listen(
            self.host,
            self.port,
            server_host_keys=[self.keys.host_key],
            authorized_client_keys=asyncssh.import_authorized_keys(
                self.keys.authorized_keys_path.read_text()
            ),
            server_factory=Tracking,
            process_factory=_run_command,
            sftp_factory=True,
            encoding=None,
            allow_scp=True,
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def drop_connections(self) -> None:
        for conn in self._conns:
            conn.abort()
        self._conns.clear()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        self.drop_connections()
