"""`eagle3-tui bookmarks`: list, add, remove and export bookmarked samples from scripts.

Exit codes: 0 done; 1 a failure (store unusable, removing what is not bookmarked, adding a
local path where nothing is, unless --force);
2 a usage error (bad arguments, bad target text, bad tag).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from eagle3_tui.commands._options import add_connection_arguments, refused_by_gate
from eagle3_tui.names import json_for_terminal, printable, unfiltered

if TYPE_CHECKING:
    from eagle3_tui.bookmarks.headline import Headline
    from eagle3_tui.engines.results.summary import Summary

PROG = "eagle3-tui bookmarks"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Targets are local paths, [user@]host:path or ssh://[user@]host[:port]/path. "
        "The store is DATA_DIR/bookmarks.sqlite3; DATA_DIR defaults to the user data folder "
        "or $EAGLE3_TUI_DATA_DIR."
    )
    _data_dir_option(parser, None)
    parser.set_defaults(action="list", json=False, filter=None, tag=None, host=None)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))

    p = actions.add_parser("list", help="print bookmarks (the default action)")
    _filter_options(p)
    p.add_argument("--json", action="store_true", help="one JSON object per line")

    p = actions.add_parser("add", help="bookmark targets, or update their note and tags")
    p.add_argument("targets", nargs="+", metavar="TARGET", help='a target; "-" reads targets from stdin, one per line')
    p.add_argument("--note", help="set the note (replaces an existing note)")
    p.add_argument("--tag", dest="tags", action="append", default=[], metavar="TAG",
                   help="add a tag (repeatable; existing tags are kept)")  # fmt: skip
    p.add_argument("--summarize", action="store_true",
                   help="load each sample (on its host) and keep its headline: schema, T, norm means")  # fmt: skip
    p.add_argument("--force", action="store_true",
                   help="bookmark local paths even when nothing is there (yet)")  # fmt: skip

    add_connection_arguments(p)

    p = actions.add_parser("remove", help="remove bookmarks")
    p.add_argument("targets", nargs="+", metavar="TARGET", help='a target; "-" reads targets from stdin')

    p = actions.add_parser("export", help="write bookmarks as json, csv or paths to stdout")
    p.add_argument("--format", choices=("json", "csv", "paths"), default="json",
                   help="json: array of objects; csv: one row each; paths: the file path on its "
                   "machine, one per line (default: json)")  # fmt: skip
    p.add_argument("--null", action="store_true", help="paths: end each path with NUL instead of newline")
    _filter_options(p)

    for sub in actions.choices.values():
        _data_dir_option(sub, argparse.SUPPRESS)


def _data_dir_option(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument("--data-dir", metavar="DIR", default=default,
                        help="folder of the bookmark store (default: the user data folder)")  # fmt: skip


def _filter_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--filter", metavar="TEXT", help="only bookmarks whose target, note, #tags or headline contain every word")
    parser.add_argument("--tag", metavar="TAG", help="only bookmarks with this tag")
    parser.add_argument("--host", metavar="HOST", help='only bookmarks on this host ("local" for this machine)')


def run(args: argparse.Namespace) -> int:
    # lazy: pulls sqlite3 in, kept off --help's imports
    from eagle3_tui.bookmarks import BookmarkError, clean_tags, open_store
    from eagle3_tui.target import TargetError, parse_target

    action = args.action or "list"
    try:
        if action in ("add", "remove"):
            targets = _read_targets(args.targets)
            parts = [parse_target(t).canonical() for t in targets]
            tags = clean_tags(getattr(args, "tags", []))
    except (TargetError, BookmarkError) as e:
        return _fail(str(e), 2)
    if action == "add" and not args.force:
        # a typo would otherwise become a bookmark nobody can open; remote paths are not checked
        missing = [t for t, p in zip(targets, parts, strict=True) if p.host is None and not os.path.lexists(p.path)]
        for t in missing:
            _fail(f"{t}: no such file or folder; not bookmarked (--force bookmarks it anyway)", 1)
        if missing:
            return 1
    try:
        with open_store(args.data_dir) as store:
            if action == "list":
                return _list(store, args)
            if action == "add":
                return _add(store, targets, args, tags)
            if action == "remove":
                return _remove(store, targets)
            return _export(store, args)
    except BookmarkError as e:
        return _fail(str(e), 1)
    except BrokenPipeError:
        _silence_stdout()
        return 0


def _read_targets(targets: list[str]) -> list[str]:
    out: list[str] = []
    for t in targets:
        if t == "-":
            out.extend(line.rstrip("\r\n") for line in sys.stdin if line.strip())
        else:
            out.append(t)
    return out


def _selected(store, args: argparse.Namespace):
    return store.list(args.filter, tag=args.tag, host=args.host)


def _list(store, args: argparse.Namespace) -> int:
    bookmarks = _selected(store, args)
    if args.json:
        for b in bookmarks:
            sys.stdout.write(json_for_terminal(json.dumps(b.to_json(), ensure_ascii=False)) + "\n")
        return 0
    if not bookmarks:
        print(f"no bookmarks ({store.path})", file=sys.stderr)
    for b in bookmarks:
        tags = " ".join("#" + t for t in b.tags)
        print("  ".join(filter(None, [printable(b.target), tags, b.headline_text])))  # a name's newline stays one line
        if b.note:
            print("    " + " ".join(b.note.splitlines()))
    return 0


def _add(store, targets: list[str], args: argparse.Namespace, tags: tuple[str, ...]) -> int:
    known = store.keys()
    headlines, failed = _headlines(targets, args) if args.summarize else ({}, [])
    saved = store.add_many(targets, note=args.note, tags=tags, headlines=headlines)
    new = sum(1 for b in saved if b.target not in known)
    print(f"{new} new, {len(saved) - new} updated bookmark(s) in {store.path}", file=sys.stderr)

    # a pickle this torch may not load (torch below 2.10): exit 2, as summary does
    return 2 if any(map(refused_by_gate, failed)) else 1 if failed else 0


def _headlines(targets: list[str], args: argparse.Namespace) -> tuple[dict[str, Headline], list[Summary]]:
    """Headlines of the targets' samples, computed where the data is (like `summary`)."""
    # lazy: pulls sqlite3 in, kept off --help's imports
    from eagle3_tui.bookmarks import headline_from_summary
    from eagle3_tui.commands._targets import summarize_targets

    summary_args = argparse.Namespace(**{**vars(args), "k": 0, "slots": None, "hidden": None})
    headlines: dict[str, Headline] = {}
    failed: list[Summary] = []
    for target, summary in zip(targets, summarize_targets(targets, summary_args), strict=False):
        if summary.get("error"):
            failed.append(summary)
            print(f"{PROG}: {target}: {summary['error']} (bookmarked with that error)", file=sys.stderr)
        headlines[target] = headline_from_summary(summary)
    return headlines, failed


def _remove(store, targets: list[str]) -> int:
    missing = store.remove_many(targets)
    for key in missing:
        print(f"{PROG}: not bookmarked: {key}", file=sys.stderr)
    print(f"removed {len(targets) - len(missing)} bookmark(s)", file=sys.stderr)
    return 1 if missing else 0


def _export(store, args: argparse.Namespace) -> int:
    # lazy: pulls sqlite3 in: loaded when used
    from eagle3_tui.bookmarks.export import export

    bookmarks = _selected(store, args)
    text = export(bookmarks, args.format, null=args.null)
    if args.format == "paths" and args.host is None:
        hosts = {b.host or "local" for b in bookmarks}
        if len(hosts) > 1:
            print(f"{PROG}: note: paths from {len(hosts)} machines ({', '.join(sorted(hosts))}); "
                  "use --host to pick one", file=sys.stderr)  # fmt: skip
    if args.format == "json":
        text = json_for_terminal(text)
    # an export is data: bytes as they are into a file or a pipe (NUL-separated paths, a note's
    # CR in CSV), escaped only when they would land on a terminal
    out = sys.stdout if sys.stdout.isatty() else unfiltered(sys.stdout)
    out.write(text)
    out.flush()
    return 0


def _fail(message: str, code: int) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return code


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
