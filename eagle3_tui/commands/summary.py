"""`eagle3-tui summary PATH...`: per-slot statistics, as a table or as JSON lines."""

from __future__ import annotations

import argparse
import sys

from eagle3_tui.commands._options import (
    add_connection_arguments,
    add_tokenizer_argument,
    below_one,
    json_line,
    refused_by_gate,
)
from eagle3_tui.commands.identify import add_model_argument
from eagle3_tui.engines.results.summary import PartSummary, Summary
from eagle3_tui.names import printable


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="sample files (local or host:path)")
    p.add_argument("--json", action="store_true", help="one JSON object per file per line")
    p.add_argument("-k", type=int, default=5, metavar="N", help="first N values per token (default 5)")
    p.add_argument("--slots", type=int, metavar="K", help="number of slots in a bare [T, K*H] tensor")
    p.add_argument("--hidden", type=int, metavar="H", help="hidden size H of a bare [T, K*H] tensor")
    add_tokenizer_argument(p)

    add_model_argument(p, "fill the b column with the boundary each slot's states match (b=2*)")
    add_connection_arguments(p)


def run(args: argparse.Namespace) -> int:
    if args.k < 0:
        print("eagle3-tui summary: error: -k must be 0 or more", file=sys.stderr)
        return 2
    if (usage := below_one(args, "summary", "slots", "hidden")) is not None:
        return usage
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import local_folder_problem, summarize_targets
    from eagle3_tui.target import TargetError, parse_target

    try:
        local = args.model is not None and not any(parse_target(p).is_remote for p in [*args.paths, args.model])
    except TargetError:
        local = False  # said per path below
    # a --model folder that cannot be used is a usage error (exit 2); the summaries still stand,
    # each saying why it is not identified
    unusable = local and local_folder_problem(args.model) is not None

    failed = refused = False
    for result in summarize_targets(args.paths, args):
        # a readable non-sample (vocab_mapping.pt) is reported as what it is, not as a failure
        failed |= "error" in result and not result.get("not_sample")
        refused |= refused_by_gate(result)  # a torch below 2.10 may not unpickle: as a usage error
        problem = (result.get("identify") or {}).get("error")
        if problem:  # the summary stands; the identification the user asked for did not happen
            failed = True
            print(f"eagle3-tui summary: {printable(result['path'])}: --model: {printable(problem, message=True)}",
                  file=sys.stderr, flush=True)
        if args.json:
            print(json_line(result), flush=True)
        elif "error" in result and not result.get("not_sample"):
            # the message goes to stderr; the table output keeps a line saying this file failed
            print(f"eagle3-tui summary: {format_summary(result)}", file=sys.stderr, flush=True)
            print(f"{printable(result['path'])}: failed (message on stderr)", flush=True)
        else:
            print(format_summary(result), flush=True)
    return 2 if unusable or refused else 1 if failed else 0


def _num(v: float | None, width: int = 9) -> str:
    if v is None:
        return "-".rjust(width)
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
        return f"{v:.2e}".rjust(width)
    return f"{v:.4g}".rjust(width)


def _identified(part: PartSummary) -> str | None:
    """b=N* for a boundary the target model identified (post* after the final norm, ~N* for
    the nearest boundary of a slot that matches none); None when not identified."""
    got = part.get("identified")
    if not got:
        return None
    if got.get("boundary") is not None:
        return f"b={got['boundary']}*"
    if got.get("norm"):
        return f"{got['norm']}*"
    return f"~{got.get('nearest', '?')}*"


def _where(part: PartSummary) -> str:
    identified = _identified(part)
    if identified is not None:
        said = part.get("boundary")
        return identified if said is None or f"b={said}*" == identified else f"b={said}≠{identified[2:]}"
    if part.get("boundary") is not None:
        return f"b={part['boundary']}"
    if part.get("boundary_note"):
        return f"b={part['boundary_note']}"
    return "b=?"


def format_summary(r: Summary) -> str:
    if r.get("not_sample"):
        contents = r.get("contents") or {}
        rows = [f"{printable(r['path'])}: not a hidden-state sample; it holds {len(contents)} entries:"]
        width = min(max((len(str(k)) for k in contents), default=0), 40)
        rows += [f"  {printable(str(key)):<{width}}  {desc}" for key, desc in contents.items()]
        return "\n".join(rows)
    if "error" in r:
        lines = [f"{printable(r['path'])}: error: {printable(r['error'], message=True)}"]
        return "\n".join(lines)
    pad = r["padding"]["trailing"]
    facts = [
        f"schema {r['schema']}",
        f"T {r['tokens']} (valid {r['valid_tokens']}{f', {pad} padding' if pad else ''})",
        f"H {r['hidden']}",
        f"k {len(r['slots'])} slots",
        r["dtype"],
    ]
    if loss_mask := r.get("loss_mask"):
        facts.append(f"loss mask {loss_mask['ones']}/{loss_mask['total']}")
    if r.get("computed"):
        facts.append(f"computed {r['computed']}")
    rows = [printable(r["path"]), "  " + " | ".join(facts)]  # names can hold ESC, CR, LF
    cols = "  {:<7} {:<9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5} {:>5}"
    rows.append(cols.format("slot", "where", "norm", "norm min", "norm max", "mean", "std", "absmax", "NaN", "Inf"))
    parts = [(p, _where(p)) for p in r["slots"]]
    if final := r.get("final"):
        where = _identified(final) or (f"{r['final_norm']}-norm" if r.get("final_norm") else _where(final))
        parts.append((final, where))
    for part, where in parts:
        numbers = [part[key] for key in ("norm_mean", "norm_min", "norm_max", "mean", "std", "absmax")]
        rows.append(cols.format(part["label"], where, *(_num(v) for v in numbers), part["nan"], part["inf"]))
    ident = r.get("identify")
    if ident and not ident.get("error"):
        conv = c["message"] if (c := ident.get("convention")) else None
        rows.append(f"  *: identified against {printable(str(ident.get('model')))} (L = {ident.get('layers')}, "
                    f"{ident.get('tokens')} tokens); ~n*: matches no boundary, n is the nearest")
        if conv:
            rows.append(f"  layers: {conv}")
    elif ident:
        rows.append(f"  not identified: {printable(ident['error'], message=True)}")
    for note in r.get("assumptions", []):
        rows.append(f"  assumed: {note}")
    for warning in r.get("warnings", []):
        rows.append(f"  warning: {warning}")
    rows += _text_lines(r)
    return "\n".join(rows)


#: characters of trained text shown per span in the table output (--json has it all)
SPAN_CHARS = 160


def _text_lines(r: Summary) -> list[str]:
    if r.get("text_error"):
        return [f"  text: {r['text_error']}"]
    spans = r.get("loss_spans")
    if spans is None:
        return []
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.engines.read.tokens import visible

    if not spans:
        return ["  trained on: nothing (no loss-masked token)"]
    lines = [f"  trained on ({len(spans)} span{'s' if len(spans) != 1 else ''} of loss mask 1):"]
    for span in spans:
        text = visible(span["text"])
        if len(text) > SPAN_CHARS:
            text = text[: SPAN_CHARS - 1] + "…"
        lines.append(f"    [{span['start']}:{span['end']}] {text}")
    return lines
