"""`eagle3-tui pair CAPTURE DATASET`: which training samples hold this capture's prompt?

Matches by token ids when the capture has them, else by hidden states, from the dataset's scan
records (dataset/pair.py): the first pairing scans the dataset (quick, cached like `scan`), the
next ones read no sample. DATASET is on CAPTURE's machine (a plain path there, or host:path).
Exit status: 0 with at least one match, 1 with none, 2 when a side or the host cannot be used.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from eagle3_tui.commands._options import add_connection_arguments, below_one, json_line
from eagle3_tui.names import printable
from eagle3_tui.sources.base import SourceError
from eagle3_tui.userdirs import writes_inside

if TYPE_CHECKING:
    from eagle3_tui.dataset.pair import PairResult


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("capture", metavar="CAPTURE", help="inference capture (local path or host:path)")
    p.add_argument("dataset", metavar="DATASET",
                   help="training dataset folder, on CAPTURE's machine (a plain path there, or host:path)")
    p.add_argument("--top", type=int, default=5, metavar="N", help="matches to list (default 5)")
    p.add_argument("--no-cache", action="store_true", help="read every sample again (the records are still stored)")
    p.add_argument("--json", action="store_true",
                   help='print {"capture", "matches": [{"path", "shared_tokens", "how", "score", "relation"}]}')

    add_connection_arguments(p)


def run(args: argparse.Namespace) -> int:
    if (usage := below_one(args, "pair", "top")) is not None:
        return usage
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.target import TargetError

    try:
        result = pair_target(args)
    except (SourceError, TargetError, OSError) as err:  # one line, never a traceback
        print(f"eagle3-tui pair: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json_line(result), flush=True)
    elif "error" in result:
        print(f"{printable(result['capture'])}: error: {result['error']}", file=sys.stderr)
    else:
        print(format_result(result), flush=True)
    return 2 if "error" in result else 0 if result["matches"] else 1


def pair_target(args: argparse.Namespace) -> PairResult:
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import on_host, run_on_source
    from eagle3_tui.dataset.pair import pair_capture
    from eagle3_tui.target import TargetError, parse_target

    target = parse_target(args.capture)
    dataset = on_host(args.dataset, target, "DATASET")
    if not target.is_remote and not args.no_cache:  # the record cache would land in the dataset

        if (problem := writes_inside(dataset, data_too=False)) is not None:
            raise TargetError(problem)
    result = run_on_source(target, args, lambda source: pair_capture(
        source, target.path, dataset, top=args.top, use_cache=not args.no_cache))
    result["capture"] = args.capture  # as typed, host included
    return result


_HOW = {"exact": "the same token ids", "prefix": "its ids begin the sample", "holds": "the sample's ids begin it",
        "head": "a shared head of ids", "states": "hidden states"}


def format_result(r: PairResult) -> str:
    by = "token ids" if r.get("paired_by", "ids" if r.get("capture_ids") else "states") == "ids" else (
        f"hidden states (the capture: {r['capture_ids_blank']})" if r.get("capture_ids_blank")
        else "hidden states (the capture has no token ids)" if not r.get("capture_ids")
        else "hidden states (the samples' records have no token ids)")
    n: int | str | None = r.get("capture_tokens")  # the refusal's words below replace it
    lines = [f"{printable(r['capture'])}: {n} token{'' if n == 1 else 's'}, paired by {by} with {printable(r['dataset'])}",
             f"  {r['files']} files, {r['files_read']} read ({r['files'] - r['files_read']} from the cache)"]
    if r.get("refused"):  # they decide what can be matched: said, and how many
        n = "all" if r["refused"] == r["files"] else f"{r['refused']} of the"
        lines.append(f"  {n} {r['files']} files were refused: {printable(r['refusal'])}")
    if not r["matches"]:
        lines.append("  no training sample could be compared" if r.get("refused") == r["files"]
                     else "  no training sample holds its prompt")
    if r.get("tie"):
        first = r["matches"][0]
        short = f"the capture holds {n} token{'' if n == 1 else 's'}: " if isinstance(n, int) and n <= first["shared_tokens"] else ""
        lines.append(f"  {r['tie']} samples tie for first at score {first['score']:.3f} ({short}nothing tells them apart; "
                     "the order below is by name)")
    for i, m in enumerate(r["matches"], 1):
        lines.append(f"  {i}. {printable(m['path'])}  {m['shared_tokens']} shared tokens  score {m['score']:.3f}  "
                     f"({_HOW.get(m['relation'], m['relation'])})")
    return "\n".join(lines)
