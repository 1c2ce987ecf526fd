"""The one place the UI turns a target string into an open Source.

Local paths get a LocalSource; `host:path` targets go through the SSH source, which asks
`confirm_host_key` before trusting a new host key and reports progress through `on_status`.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from eagle3_tui.sources.base import Source, SourceError
from eagle3_tui.target import TargetError, parse_target


@dataclass
class Opened:
    source: Source
    path: str
    #: "local" or "user@host": what the title bar says
    where: str


async def open_target(
    text: str,
    *,
    remote_python: str | None = None,
    accept_new_host_key: bool = False,
    confirm_host_key: Callable[[Any], Awaitable[bool]] | None = None,
    on_status: Callable[[str], None] | None = None,
    ssh_config: str | None = None,
    known_hosts: str | None = None,
) -> Opened:
    """Parse `text`, open its Source and connect (raises SourceError with one line to show)."""
    from eagle3_tui.sources.opener import open_source  # lazy: the sources (multiprocessing, asyncssh)

    try:
        target = parse_target(text)
    except TargetError as err:
        raise SourceError(str(err)) from None
    source = open_source(
        target,
        remote_python=remote_python or "python3",
        accept_new_host_key=accept_new_host_key,
        confirm_host_key=confirm_host_key,
        on_status=on_status,
        ssh_config=ssh_config,
        known_hosts=known_hosts,
    )
    if target.host is None:
        await source.connect()  # nothing to open: decides whether this torch may unpickle
        return Opened(source, os.path.abspath(target.path), "local")
    if on_status is not None:
        on_status(f"connecting to {target.display()}…")
    await source.connect()
    return Opened(source, target.path, source.label)
