"""Host key policy: known keys pass, changed keys are refused, unknown keys need the user's yes.

asyncssh raises the same HostKeyNotVerifiable for an unknown and a changed key; we tell them
apart by whether known_hosts lists any key for that host.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from eagle3_tui.sources.base import SourceError

DEFAULT_PORT = 22


@dataclass(frozen=True)
class HostKeyPrompt:
    """What the user needs to decide whether an unknown host key is the right one."""

    host: str
    port: int
    algorithm: str  # e.g. "ssh-ed25519"
    fingerprint_sha256: str  # "SHA256:..."
    known_hosts_line: str  # the line we append on acceptance
    known_hosts_file: str = ""

    @property
    def keyscan_command(self) -> str:
        port = f"-p {self.port} " if self.port != DEFAULT_PORT else ""
        return f"ssh-keyscan {port}-t {self.algorithm} {self.host} >> {self.known_hosts_file}"


class HostKeyError(SourceError):
    """The host key is unknown (and not confirmed), changed, or checking is turned off."""

    def __init__(self, message: str, prompt: HostKeyPrompt | None = None, changed: bool = False):
        super().__init__(message)
        self.prompt = prompt
        self.changed = changed


def known_hosts_name(host: str, port: int) -> str:
    return host if port == DEFAULT_PORT else f"[{host}]:{port}"


def make_prompt(host: str, port: int, key: asyncssh.SSHKey, known_hosts_file: str) -> HostKeyPrompt:
    public = key.export_public_key("openssh").decode("ascii").split()
    line = f"{known_hosts_name(host, port)} {public[0]} {public[1]}"
    return HostKeyPrompt(
        host=host,
        port=port,
        algorithm=key.get_algorithm(),
        fingerprint_sha256=key.get_fingerprint("sha256"),
        known_hosts_line=line,
        known_hosts_file=known_hosts_file,
    )


def load_known_hosts(files: list[str]) -> asyncssh.SSHKnownHosts:
    """All entries of the files that exist; a missing file simply knows no hosts."""
    text = []
    for name in files:
        try:
            text.append(Path(name).read_text("utf-8", errors="replace"))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as err:
            raise SourceError(f"cannot read known hosts file {name}: {err.strerror}") from None
    try:
        return asyncssh.import_known_hosts("\n".join(text))
    except (ValueError, asyncssh.KeyImportError) as err:
        raise SourceError(f"cannot parse known hosts ({', '.join(files)}): {err}") from None


def host_is_known(known: asyncssh.SSHKnownHosts, host: str, addr: str, port: int) -> bool:
    """True if known_hosts vouches for this host with any key or CA (so a mismatch is a change)."""
    match_port = None if port == DEFAULT_PORT else port
    trusted_keys, trusted_cas, *_ = asyncssh.match_known_hosts(known, host, addr, match_port)
    return bool(trusted_keys or trusted_cas)


def append_known_host(path: str, line: str) -> None:
    target = Path(path)
    if not target.parent.exists():
        target.parent.mkdir(mode=0o700, parents=True)
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        if f.tell() > 0 and not _ends_with_newline(target):
            f.write("\n")
        f.write(line + "\n")


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def unknown_key_message(where: str, prompt: HostKeyPrompt) -> str:
    return (
        f"{where}: host key unknown ({prompt.algorithm} {prompt.fingerprint_sha256}); "
        "check the fingerprint, then re-run with --accept-new-host-key or add it to known_hosts"
    )


def changed_key_message(where: str, prompt: HostKeyPrompt) -> str:
    return (
        f"{where}: HOST KEY CHANGED (now {prompt.algorithm} {prompt.fingerprint_sha256}); "
        "refusing to connect: someone may be intercepting the connection. If the host was "
        f"reinstalled, remove the old key: ssh-keygen -R '{known_hosts_name(prompt.host, prompt.port)}'"
        + (f" -f {prompt.known_hosts_file}" if prompt.known_hosts_file else "")
    )


def checking_off_message(where: str) -> str:
    return (
        f"{where}: your ssh config turns host key checking off (UserKnownHostsFile none); "
        "eagle3-tui never connects without verifying the host key: remove that setting for this host"
    )
