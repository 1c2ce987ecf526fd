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
from eagle3_tui.sources.local import LocalSource


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
) -> Opened:
    try:
        from eagle3_tui.sources.target import open_source, parse_target
    except ImportError:  # SSH support not merged yet: local paths only
        if _looks_remote(text):
            raise SourceError(f"{text}: remote targets are not supported by this build") from None
        return Opened(LocalSource(), os.path.abspath(os.path.expanduser(text)), "local")

    target = parse_target(text)
    source = open_source(
        target,
        remote_python=remote_python or "python3",
        accept_new_host_key=accept_new_host_key,
        confirm_host_key=confirm_host_key,
        on_status=on_status,
    )
    await source.connect()
    where = "local" if target.host is None else source.label
    path = target.path
    if target.host is None:
        path = os.path.abspath(os.path.expanduser(path))
    return Opened(source, path, where)


def _looks_remote(text: str) -> bool:
    head = text.split("/", 1)[0]
    return ":" in head and not os.path.exists(text)
