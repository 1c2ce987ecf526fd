"""What the user typed, parsed once: a local path or a folder on an SSH host.

Accepted forms (one parser for every command and the UI):
  /data/x, ./x, ~/x, x              local
  [user@]host:path                  scp style; host may be an ~/.ssh/config alias
  [user@]host:2222:/path            scp style with a port (digits between two colons)
  [user@][::1]:path                 IPv6 literal in brackets
  ssh://[user@]host[:port]/path     URL; ssh://host/~/x is x relative to the home folder

As with scp, a colon before the first slash makes it remote: write ./a:b for a local file "a:b".
An empty remote path means the remote home folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eagle3_tui.sources.base import SourceError

if TYPE_CHECKING:
    from eagle3_tui.sources.base import Source
    from eagle3_tui.sources.hostkeys import HostKeyPrompt


class TargetError(SourceError):
    """The target text cannot be understood."""


@dataclass(frozen=True)
class Target:
    host: str | None
    user: str | None
    port: int | None
    path: str

    @property
    def is_remote(self) -> bool:
        return self.host is not None

    def display(self) -> str:
        if self.host is None:
            return self.path
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.user}@" if self.user else ""
        port = f"{self.port}:" if self.port else ""
        return f"{user}{host}:{port}{self.path}"

    def with_path(self, path: str) -> Target:
        return Target(self.host, self.user, self.port, path)


_URL = re.compile(
    r"^ssh://(?:(?P<user>[^@/]+)@)?(?P<host>\[[^\]/]+\]|[^:/\[\]]+)(?::(?P<port>\d*))?(?P<path>/.*)?$",
    re.DOTALL,
)
_SCP = re.compile(
    r"^(?:(?P<user>[^/]+)@)?(?P<host>\[[^\]/]+\]|[^:/@\[\]]+):(?:(?P<port>\d+):)?(?P<path>.*)$",
    re.DOTALL,
)


def _port(text: str | None, whole: str) -> int | None:
    if not text:
        return None
    port = int(text)
    if not 0 < port < 65536:
        raise TargetError(f"{whole}: port {port} is out of range")
    return port


def _remote_path(path: str) -> str:
    # "~" and "~/x" mean the home folder, which is where SFTP and the agent start.
    if path in ("", "~", "~/"):
        return "."
    if path.startswith("~/"):
        return path[2:]
    return path


def parse_target(text: str) -> Target:
    if not text:
        raise TargetError("empty target: give a folder or file, e.g. /data or box:/data")
    if text.startswith("ssh://"):
        m = _URL.match(text)
        if not m:
            raise TargetError(f"{text}: not a valid ssh:// target (ssh://[user@]host[:port]/path)")
        path = m["path"] or ""
        if path.startswith("/~"):
            path = path[1:]
        return Target(m["host"].strip("[]"), m["user"], _port(m["port"], text), _remote_path(path))
    slash, colon = text.find("/"), text.find(":")
    if not (colon > 0 and (slash < 0 or colon < slash)):
        return Target(None, None, None, os.path.expanduser(text))
    m = _SCP.match(text)
    if not m or not m["host"].strip("[]"):
        raise TargetError(f"{text}: not a valid remote target ([user@]host:path)")
    return Target(m["host"].strip("[]"), m["user"], _port(m["port"], text), _remote_path(m["path"]))


def open_source(
    target: Target,
    *,
    remote_python: str = "python3",
    accept_new_host_key: bool = False,
    confirm_host_key: Callable[[HostKeyPrompt], Awaitable[bool]] | None = None,
    on_status: Callable[[str], None] | None = None,
    ssh_config: str | None = None,
    known_hosts: str | None = None,
) -> Source:
    """A Source for `target`; it does not connect yet (await source.connect())."""
    if not target.is_remote:
        from eagle3_tui.sources.local import LocalSource

        return LocalSource()
    from eagle3_tui.sources.ssh import SshSource

    return SshSource(
        target,
        remote_python=remote_python,
        accept_new_host_key=accept_new_host_key,
        confirm_host_key=confirm_host_key,
        on_status=on_status,
        ssh_config=ssh_config,
        known_hosts=known_hosts,
    )
