"""Turning command-line targets into Sources, shared by the subcommands that take paths.

Every file goes through a Source (one door for local and remote): a LocalSource computes in
this process, an SshSource per host (one connection, one agent) on the box, so a list of files
on a box pays the connection once. Status lines ("no torch on box: computing locally") go to
stderr; results keep the path as typed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar, overload

from eagle3_tui.commands._options import say
from eagle3_tui.engines.model.folder_config import FolderConfigError, read_model_config
from eagle3_tui.engines.results.errors import error_result
from eagle3_tui.engines.results.summary import Summary
from eagle3_tui.engines.scan.agreement import check_drafter
from eagle3_tui.sources.base import Source, SourceError
from eagle3_tui.sources.opener import open_source
from eagle3_tui.sources.tokenizer import TokenizerChoice
from eagle3_tui.target import Target, TargetError, parse_target

_R = TypeVar("_R")

# Progress chatter from the SSH source; shown on a terminal, left out of logs and pipes.
_PROGRESS = ("connecting to ", "starting agent", "connected (", "fetching ")


def status(message: str) -> None:
    if sys.stderr.isatty() or not message.startswith(_PROGRESS):
        say(message)


def explain_source_error(err: Exception) -> None:
    """Extra stderr lines for a refused host key: what to check and how to trust it."""
    # lazy: pulls asyncssh in: loaded when used
    from eagle3_tui.sources.hostkeys import HostKeyError

    if isinstance(err, HostKeyError) and err.prompt is not None and not err.changed:
        p = err.prompt
        say(f"  the server's {p.algorithm} key fingerprint is {p.fingerprint_sha256}")
        say("  if that is right, re-run with --accept-new-host-key, or add the key yourself:")
        say(f"    {p.keyscan_command}")
        say(f"  (the line to add: {p.known_hosts_line})")


def open_cli_source(target, args: argparse.Namespace):
    """A Source for `target` with the command line's SSH options (not connected yet)."""
    return open_source(
        target,
        remote_python=getattr(args, "remote_python", "python3"),
        accept_new_host_key=getattr(args, "accept_new_host_key", False),
        on_status=status,
    )


def run_interruptibly(loop: asyncio.AbstractEventLoop, coro):
    """loop.run_until_complete(coro); on ctrl+c the task is cancelled first, so a computation in
    a worker thread is told to stop (the Sources set their cancel event) before we leave."""
    task = loop.create_task(coro)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        task.cancel()
        try:
            loop.run_until_complete(task)
        except BaseException:  # noqa: BLE001 - the CancelledError we asked for, or the source's own
            pass
        raise


def run_on_source(target: Target, args: argparse.Namespace, call: Callable[[Source], Awaitable[_R]]) -> _R:
    """Open the Source of `target`'s machine with the command line's options, connect, return
    `await call(source)`, close. A refused connection is explained on stderr and raised again;
    ctrl+c cancels the computation (see run_interruptibly)."""
    async def run() -> _R:
        source = open_cli_source(target, args)
        try:
            await source.connect()
            return await call(source)
        except SourceError as err:
            explain_source_error(err)
            raise
        finally:
            await source.close()

    loop = asyncio.new_event_loop()
    try:
        return run_interruptibly(loop, run())
    finally:
        loop.close()


class _Hosts:
    """One connected Source per place (user, host, port; the local disk is one place too),
    or the error that connecting gave."""

    def __init__(self, loop: asyncio.AbstractEventLoop, args: argparse.Namespace):
        self._loop = loop
        self._args = args
        self._sources: dict[tuple, Any] = {}

    def get(self, target):
        if target.place not in self._sources:
            source = open_cli_source(target, self._args)
            try:
                run_interruptibly(self._loop, source.connect())
            except SourceError as err:
                explain_source_error(err)
                source = err
            self._sources[target.place] = source
        return self._sources[target.place]

    def close(self) -> None:
        for source in self._sources.values():
            if not isinstance(source, Exception):
                self._loop.run_until_complete(source.close())


@overload
def on_host(value: str, target, what: str) -> str: ...
@overload
def on_host(value: None, target, what: str) -> None: ...
@overload
def on_host(value: str | None, target, what: str) -> str | None: ...
def on_host(value: str | None, target, what: str) -> str | None:
    """A path given for the data's host (--model, --drafter): `box:/m` or a bare `/m` both mean
    /m on the box; another host is refused (SourceError)."""
    if value is None:
        return None
    t = parse_target(value)
    if not t.is_remote:
        return t.path if target.is_remote else value
    if t.place != target.place:
        raise SourceError(f"{what} {value} must be on the same machine as the sample ({target.display()})")
    return t.path


def options_on_host(args: argparse.Namespace, target, flags: dict[str, str]) -> dict[str, str | None]:
    """A command's folder options at once, each as on_host reads it: {attribute: the path on the
    data's machine, or None when not given}, for `flags` {attribute: the flag as the user wrote it}.
    The first one on another host raises SourceError (TargetError when it does not parse)."""
    return {name: on_host(getattr(args, name, None), target, flag) for name, flag in flags.items()}


def local_folder_problem(model: str | None, drafter: str | None = None, option: str = "--accept") -> str | None:
    """One line saying why a --model folder or a drafter folder on this machine cannot be used
    (its config.json through engines/model/folder_config.py, the drafter loaded), checked before any
    work starts; None when both are usable or not given."""
    if model is not None:
        try:
            read_model_config(model)
        except FolderConfigError as err:
            return f"--model: {err}"
    if drafter is not None:
        problem = check_drafter(drafter, model)
        if problem is not None:
            return f"{option}: {problem}"
    return None


def summarize_targets(paths: list[str], args: argparse.Namespace) -> Iterator[Summary]:
    """Summary objects in the order of `paths`; each says where it was computed."""
    loop = asyncio.new_event_loop()
    hosts = _Hosts(loop, args)
    tokenizer = TokenizerChoice(getattr(args, "tokenizer", None))
    try:
        for path in paths:
            try:
                target = parse_target(path)
            except TargetError as err:
                yield {**error_result(path, str(err))}
                continue
            source = hosts.get(target)
            if isinstance(source, SourceError):
                yield {**error_result(path, str(source))}
                continue
            model, model_error = None, None
            if getattr(args, "model", None):
                try:
                    model = on_host(args.model, target, "--model")
                except (SourceError, TargetError) as err:
                    model_error = str(err)
            try:
                result = run_interruptibly(loop, source.summarize(
                    target.path, k=args.k, slots=args.slots, hidden=args.hidden,
                    tokenizer=tokenizer.on_source(target), model=model))
            except SourceError as err:
                result = {**error_result(path, str(err), computed=source.computed)}
            if model_error and "error" not in result:
                result["identify"] = {"model": args.model, "error": model_error}
            result = tokenizer.finish(result, target)
            result["path"] = path
            result["runtime"] = source.runtime()  # which Python and torch read it (summary --json)
            yield result
    finally:
        hosts.close()
        loop.close()
