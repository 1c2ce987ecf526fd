"""Turning command-line targets into Sources, shared by the subcommands that take paths.

Local files are summarised in this process, as before; remote ones go through one SshSource
per host (one connection, one agent), so a list of files on a box pays the connection once.
Status lines ("no torch on box: computing locally") go to stderr; results keep the path as typed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterator
from typing import Any


# Progress chatter from the SSH source; shown on a terminal, left out of logs and pipes.
_PROGRESS = ("connecting to ", "starting agent", "connected (", "fetching ")


def say(message: str) -> None:
    print(f"eagle3-tui: {message}", file=sys.stderr, flush=True)


def status(message: str) -> None:
    if sys.stderr.isatty() or not message.startswith(_PROGRESS):
        say(message)


def explain_source_error(err: Exception) -> None:
    """Extra stderr lines for a refused host key: what to check and how to trust it."""
    from eagle3_tui.sources.hostkeys import HostKeyError

    if isinstance(err, HostKeyError) and err.prompt is not None and not err.changed:
        p = err.prompt
        say(f"  the server's {p.algorithm} key fingerprint is {p.fingerprint_sha256}")
        say("  if that is right, re-run with --accept-new-host-key, or add the key yourself:")
        say(f"    {p.keyscan_command}")
        say(f"  (the line to add: {p.known_hosts_line})")


def open_cli_source(target, args: argparse.Namespace):
    """A Source for `target` with the command line's SSH options (not connected yet)."""
    from eagle3_tui.sources.opener import open_source

    return open_source(
        target,
        remote_python=getattr(args, "remote_python", "python3"),
        accept_new_host_key=getattr(args, "accept_new_host_key", False),
        on_status=status,
    )


class _Hosts:
    """One connected Source per (user, host, port), or the error that connecting gave."""

    def __init__(self, loop: asyncio.AbstractEventLoop, args: argparse.Namespace):
        self._loop = loop
        self._args = args
        self._sources: dict[tuple, Any] = {}

    def get(self, target):
        from eagle3_tui.sources.base import SourceError

        key = (target.user, target.host, target.port)
        if key not in self._sources:
            source = open_cli_source(target, self._args)
            try:
                self._loop.run_until_complete(source.connect())
            except SourceError as err:
                explain_source_error(err)
                source = err
            self._sources[key] = source
        return self._sources[key]

    def close(self) -> None:
        for source in self._sources.values():
            if not isinstance(source, Exception):
                self._loop.run_until_complete(source.close())


def summarize_targets(paths: list[str], args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """Summary objects in the order of `paths`; each says where it was computed."""
    from eagle3_tui.samples.stats import summarize_file
    from eagle3_tui.sources.base import SourceError
    from eagle3_tui.target import TargetError, parse_target

    loop: asyncio.AbstractEventLoop | None = None
    hosts: _Hosts | None = None
    try:
        for path in paths:
            try:
                target = parse_target(path)
            except TargetError as err:
                yield {"path": path, "error": str(err)}
                continue
            if not target.is_remote:
                result = summarize_file(target.path, k=args.k, slots=args.slots, hidden=args.hidden)
                result["computed"] = "local"
                result["path"] = path
                yield result
                continue
            if hosts is None:
                loop = asyncio.new_event_loop()
                hosts = _Hosts(loop, args)
            source = hosts.get(target)
            if isinstance(source, SourceError):
                yield {"path": path, "error": str(source)}
                continue
            try:
                result = loop.run_until_complete(
                    source.summarize(target.path, k=args.k, slots=args.slots, hidden=args.hidden)
                )
            except SourceError as err:
                result = {"path": path, "error": str(err), "computed": source.computed}
            result["path"] = path
            yield result
    finally:
        if hosts is not None:
            hosts.close()
        if loop is not None:
            loop.close()
