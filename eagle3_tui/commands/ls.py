"""`eagle3-tui ls TARGET`: a local or remote folder in natural order, folders first."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

from eagle3_tui.commands._options import add_connection_arguments
from eagle3_tui.names import json_for_terminal, printable
from eagle3_tui.sources.base import SourceError

KIND_MARK = {"dir": "d", "file": "-", "link": "l", "other": "?"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="TARGET", help="folder: /path, [user@]host:path or ssh://[user@]host[:port]/path")
    p.add_argument("--json", action="store_true", help="one JSON object per entry: name, kind, size, mtime")
    add_connection_arguments(p, loads=False)


def format_entry(entry) -> str:
    size = "" if entry.size is None else str(entry.size)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.mtime)) if entry.mtime is not None else ""
    suffix = "/" if entry.kind == "dir" else ""
    return f"{KIND_MARK.get(entry.kind, '?')} {size:>12} {when:16} {printable(entry.name)}{suffix}"


async def _list(args: argparse.Namespace):
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import open_cli_source
    from eagle3_tui.target import parse_target

    target = parse_target(args.target)
    source = open_cli_source(target, args)
    await source.connect()
    try:
        return await source.list_all(target.path)
    finally:
        await source.close()


def run(args: argparse.Namespace) -> int:
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import explain_source_error
    from eagle3_tui.target import TargetError

    try:
        entries = asyncio.run(_list(args))
    except (SourceError, TargetError) as err:
        print(f"eagle3-tui ls: {err}", file=sys.stderr)
        explain_source_error(err)
        return 1
    except KeyboardInterrupt:
        return 130
    out = sys.stdout
    for entry in entries:
        # ensure_ascii keeps every name valid JSON on one line, non-UTF-8 bytes included
        out.write((json_for_terminal(json.dumps(entry.to_json())) if args.json else format_entry(entry)) + "\n")
    out.flush()
    return 0
