"""Open one asyncssh connection for a Target: ~/.ssh/config, host key policy, one-line errors."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncssh

from eagle3_tui.sources.base import SourceError
from eagle3_tui.sources.hostkeys import (
    HostKeyError,
    HostKeyPrompt,
    append_known_host,
    changed_key_message,
    checking_off_message,
    host_is_known,
    load_known_hosts,
    make_prompt,
    unknown_key_message,
)
from eagle3_tui.target import Target

KEEPALIVE_INTERVAL = 15  # seconds; with 3 missed answers a dead link is noticed in ~60 s
KEEPALIVE_COUNT_MAX = 3
CONNECT_TIMEOUT = 15
# AES-GCM (hardware AES) roughly doubles SFTP throughput over asyncssh's default choice here.
# The channel window stays at asyncssh's 2 MiB: on loopback, 8-16 MiB windows measured 30-60%
# slower (bench/bench_ssh.py), and 2 MiB still allows ~100 MiB/s over a 20 ms link.
PREFERRED_CIPHERS = ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com"]


class ConnectError(SourceError):
    """Connecting failed. `retryable` is True for failures that may pass (refused, timeout, reset)."""

    def __init__(self, message: str, retryable: bool = False):
        super().__init__(message)
        self.retryable = retryable


class _KeyCatcher(asyncssh.SSHClient):
    """Remembers the key a server offered when known_hosts does not vouch for it."""

    def __init__(self) -> None:
        self.offered: tuple[str, str, int, asyncssh.SSHKey] | None = None

    def validate_host_public_key(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        self.offered = (host, addr, port, key)
        return False


def default_ssh_config() -> list[str]:
    path = Path("~/.ssh/config").expanduser()
    return [str(path)] if path.is_file() else []


class Connector:
    def __init__(
        self,
        target: Target,
        *,
        ssh_config: str | None = None,
        known_hosts: str | None = None,
        accept_new_host_key: bool = False,
        confirm_host_key: Callable[[HostKeyPrompt], Awaitable[bool]] | None = None,
        on_status: Callable[[str], None] | None = None,
    ):
        self.target = target
        self._config = [ssh_config] if ssh_config else default_ssh_config()
        self._known_hosts_arg = known_hosts
        self._accept_new = accept_new_host_key
        self._confirm = confirm_host_key
        self._status = on_status or (lambda _msg: None)
        self._options: asyncssh.SSHClientConnectionOptions | None = None
        self.where = target.host or "?"

    async def _base_options(self) -> asyncssh.SSHClientConnectionOptions:
        if self._options is None:
            t = self.target
            try:
                # Reads config and key files: keep it off the event loop.
                self._options = await asyncio.to_thread(
                    asyncssh.SSHClientConnectionOptions,
                    config=self._config,
                    host=t.host,
                    port=t.port if t.port else (),
                    username=t.user if t.user else (),
                )
            except (asyncssh.KeyImportError, ValueError, OSError) as err:
                raise ConnectError(f"{t.host}: cannot use your SSH settings: {err}") from None
            opts = self._options
            self.where = f"{opts.username}@{opts.host}" + (f":{opts.port}" if opts.port != 22 else "")
        return self._options

    def _known_hosts_files(self, opts: asyncssh.SSHClientConnectionOptions) -> list[str]:
        if self._known_hosts_arg:
            return [self._known_hosts_arg]
        known = opts.known_hosts  # typed as any of asyncssh's KnownHostsArg; from an SSH config, a list of files
        files = [str(Path(f).expanduser()) for f in (known if isinstance(known, list) else []) if isinstance(f, str)]
        if not files:
            files = [str(Path("~/.ssh/known_hosts").expanduser()), "/etc/ssh/ssh_known_hosts"]
        return files

    async def connect(self) -> asyncssh.SSHClientConnection:
        opts = await self._base_options()
        if opts.known_hosts is None:
            raise HostKeyError(checking_off_message(self.where))
        files = self._known_hosts_files(opts)
        extra: dict = {}
        if not opts.keepalive_interval:
            extra.update(keepalive_interval=KEEPALIVE_INTERVAL, keepalive_count_max=KEEPALIVE_COUNT_MAX)
        if not opts.connect_timeout:
            extra["connect_timeout"] = CONNECT_TIMEOUT
        if not opts.config.get("Ciphers"):
            extra["encryption_algs"] = PREFERRED_CIPHERS + [
                a.decode() for a in opts.encryption_algs if a.decode() not in PREFERRED_CIPHERS
            ]
        for _attempt in range(2):  # a second pass only after the user accepted a new key
            known = load_known_hosts(files)
            catcher = _KeyCatcher()
            try:
                return await asyncssh.connect(
                    options=opts,
                    config=self._config,  # also for a ProxyJump host, which asyncssh connects on its own
                    known_hosts=known,
                    client_factory=lambda catcher=catcher: catcher,  # this attempt's
                    agent_forwarding=False,
                    **extra,
                )
            except asyncssh.HostKeyNotVerifiable as err:
                if catcher.offered is None:  # revoked key, or a certificate we cannot check
                    raise HostKeyError(f"{self.where}: host key refused: {err.reason}") from None
                await self._decide(known, files[0], *catcher.offered)
            except Exception as err:
                raise describe_connect_error(err, self.where, opts) from None
        raise HostKeyError(f"{self.where}: host key still not accepted")

    async def _decide(self, known, known_file: str, host: str, addr: str, port: int, key) -> None:
        prompt = make_prompt(host, port, key, known_file)
        if host_is_known(known, host, addr, port):
            raise HostKeyError(changed_key_message(self.where, prompt), prompt, changed=True)
        if self._accept_new:
            accepted = True
        elif self._confirm is not None:
            accepted = await self._confirm(prompt)
        else:
            accepted = False
        if not accepted:
            raise HostKeyError(unknown_key_message(self.where, prompt), prompt)
        try:
            await asyncio.to_thread(append_known_host, known_file, prompt.known_hosts_line)
        except OSError as err:
            raise SourceError(f"cannot add the host key to {known_file}: {err.strerror}") from None
        self._status(f"added {prompt.algorithm} key {prompt.fingerprint_sha256} of {host} to {known_file}")


def describe_connect_error(err: BaseException, where: str, opts) -> ConnectError:
    host = opts.host
    port = opts.port
    if isinstance(err, socket.gaierror):
        return ConnectError(f"{host}: unknown host (not in DNS, /etc/hosts or your ssh config)")
    if isinstance(err, ConnectionRefusedError):
        return ConnectError(f"{host}:{port}: connection refused (no SSH server listening)", retryable=True)
    if isinstance(err, (asyncio.TimeoutError, TimeoutError)):
        return ConnectError(f"{host}:{port}: timed out connecting", retryable=True)
    if isinstance(err, asyncssh.PermissionDenied):
        return ConnectError(
            f"{where}: authentication failed (the server accepted none of your keys; "
            "check User and IdentityFile in ~/.ssh/config, or ssh-add)"
        )
    if isinstance(err, asyncssh.KeyExchangeFailed):
        return ConnectError(f"{where}: key exchange failed: {err.reason}")
    if isinstance(err, asyncssh.ConnectionLost):
        return ConnectError(f"{where}: connection lost while logging in ({err.reason})", retryable=True)
    if isinstance(err, asyncssh.DisconnectError):
        return ConnectError(f"{where}: server closed the connection: {err.reason}", retryable=True)
    if isinstance(err, asyncssh.KeyImportError):
        return ConnectError(f"{where}: cannot read your SSH key: {err}")
    if isinstance(err, OSError):
        return ConnectError(f"{host}:{port}: {err.strerror or err}", retryable=True)
    return ConnectError(f"{where}: cannot connect: {type(err).__name__}: {err}")
