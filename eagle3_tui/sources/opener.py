"""Open a Source for a parsed target: the local disk, or an SSH host (not connected yet)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from eagle3_tui.sources.local import LocalSource
from eagle3_tui.target import Target

if TYPE_CHECKING:
    from eagle3_tui.sources.base import Source
    from eagle3_tui.sources.hostkeys import HostKeyPrompt


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
        return LocalSource()
    # lazy: pulls asyncssh in: loaded when used
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
