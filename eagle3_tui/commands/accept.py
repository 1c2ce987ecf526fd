"""`eagle3-tui accept SAMPLE --drafter DIR`: what acceptance would this drafter get on this sample?

Runs the drafter's EAGLE-3 forward exactly as SpecForge's training step does (engines/model/accept.py)
where the data is: in this process for a local sample, on the box for `host:path` (the drafter
and model folders are then paths on that box; only the metrics travel).
Exit status: 0 with a result, 2 when the sample, the drafter or the host cannot be used.
"""

from __future__ import annotations

import argparse
import sys

from eagle3_tui.commands._options import add_connection_arguments, below_one, json_line
from eagle3_tui.engines.model.accept_words import TARGETS, targets, tau
from eagle3_tui.engines.results.accept import AcceptResult
from eagle3_tui.names import printable
from eagle3_tui.sources.base import SourceError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("sample", metavar="SAMPLE", help="hidden-state sample (local path or host:path)")
    p.add_argument("--drafter", required=True, metavar="DIR",
                   help="EAGLE-3 drafter folder (config.json + model.safetensors or pytorch_model.bin), "
                        "on SAMPLE's machine: a plain path there, or host:path naming SAMPLE's host")
    p.add_argument("--model", metavar="DIR",
                   help="target model folder: embed_tokens when the drafter has none, the LM head for "
                        "targets from the sample's post-norm final state (then also scored against the data's ids), "
                        "tokenizer.json for token text; "
                        "on SAMPLE's machine, like --drafter")
    p.add_argument("--steps", type=int, default=3, metavar="K", help="draft steps to roll out (default 3)")
    p.add_argument("--all-rows", action="store_true", help="score every valid row, not only loss rows")
    p.add_argument("--order", metavar="I,J,K",
                   help="feed the sample's slots to fc in this order (e.g. 1,2,0 for a permuted capture)")
    p.add_argument("--ids-from", metavar="SAMPLE",
                   help="a sample without token ids borrows these from SAMPLE (its training sample, see "
                        "`eagle3-tui pair`), aligned by the hidden states as compare aligns them; on SAMPLE's "
                        "machine, like --drafter")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")

    add_connection_arguments(p)


def _fail(message: str) -> int:
    print(f"eagle3-tui accept: {printable(message, message=True)}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    if (usage := below_one(args, "accept", "steps")) is not None:
        return usage
    order = None
    if args.order:
        try:
            order = [int(x) for x in args.order.split(",")]
        except ValueError:
            return _fail(f"error: --order takes slot indices like 1,2,0, not {args.order!r}")
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.target import TargetError

    try:
        result = accept_target(args, order)
    except (SourceError, TargetError, OSError) as err:  # one line, never a traceback
        return _fail(str(err))
    if args.json:
        print(json_line(result), flush=True)
    elif "error" in result:
        print(f"{printable(result['path'])}: error: {printable(result['error'], message=True)}", file=sys.stderr)
    else:
        print(format_result(result), flush=True)
    return 2 if "error" in result else 0


def accept_target(args: argparse.Namespace, order: list[int] | None) -> AcceptResult:
    """Run the drafter where the sample is, through that machine's Source."""
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import options_on_host, run_on_source
    from eagle3_tui.target import parse_target

    target = parse_target(args.sample)
    # one rule for folders (as identify, scan, summary and compare read them): a plain path or
    # `host:path` of the sample's own host, on that machine; another host is refused
    folders = options_on_host(args, target, {"drafter": "--drafter", "model": "--model", "ids_from": "--ids-from"})
    drafter, model, ids_from = folders["drafter"], folders["model"], folders["ids_from"]
    assert drafter is not None  # --drafter is required
    extra = {"ids_from": ids_from} if ids_from else {}
    result = run_on_source(target, args, lambda source: source.accept(
        target.path, drafter, model=model, steps=args.steps, all_rows=args.all_rows, order=order, **extra))
    result["path"] = args.sample  # as typed, host included
    return result


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def format_result(r: AcceptResult) -> str:
    info = r.get("drafter_info")
    shape = (info.get("shape") or info.get("layout", "?")) if info else "?"
    k = len(r["steps"])
    lines = [
        f"{printable(r['path'])}",
        f"  drafter {printable(r['drafter'])} ({printable(shape, message=True)}; H {info.get('hidden') if info else None})",
        f"  targets {targets(r)}",
        f"  top-1 {_pct(r['top1'])} over {r['rows']} rows ({r['rows_from']})"
        + (f", computed {r['computed']}" if r.get("computed") else ""),
        "  per step " + "  ".join(f"{s + 1}: {_pct(v)}" for s, v in enumerate(r["steps"])),
        f"  tau {r['tau']:.2f} (accepted length of a {k}-token draft, the target's own token included)"
        if r["tau"] is not None else "  tau -",
    ]
    if (ids := r.get("against_ids")) is not None:
        lines.append(f"  the same drafts against {TARGETS['ids']}: top-1 {_pct(ids['top1'])}, per step "
                     + " ".join(_pct(v) for v in ids["steps"]) + f", tau {tau(ids['tau'])}")
    if r.get("order"):
        lines.append(f"  slots fed in order {r['order']}")
    lines += [f"  note: {printable(n, message=True)}" for n in r.get("notes", [])]
    misses = [t for t in r["per_token"] if not t["hit"]][:8]
    if misses:
        def text(name: str | None, i: int) -> str:
            return repr(name) if name is not None else str(i)

        lines.append("  first misses (row: draft -> target, p):")
        lines += [f"    {t['row']}: {text(t.get('draft_text'), t['draft'])} -> {text(t.get('target_text'), t['target'])}, "
                  f"p {t['p']:.2f}" for t in misses]
    return "\n".join(lines)
