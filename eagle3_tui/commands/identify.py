"""`eagle3-tui identify SAMPLE --model MODEL`: which boundary of the target model each slot holds.

The model runs where it is: in this process for a local sample, inside the remote agent for
`host:path` (MODEL, --drafter and --ids-from are then paths on that host); only the scores travel.
Exit status: 0 when every slot is identified and nothing disagrees, 1 with a warning finding,
2 on unusable input (not a model folder, a width that is not the model's, no transformers).
"""

from __future__ import annotations

import argparse
import sys

from eagle3_tui.commands._options import add_connection_arguments, below_one, json_line
from eagle3_tui.engines.results.findings import blocking
from eagle3_tui.engines.results.identify import IdentifyResult
from eagle3_tui.names import printable
from eagle3_tui.sources.base import SourceError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("sample", metavar="SAMPLE", help="hidden-state file (local path or host:path)")
    p.add_argument("--model", required=True, metavar="MODEL",
                   help="Hugging Face model folder of the target (on the same machine as SAMPLE)")
    p.add_argument("--drafter", metavar="DIR", help="drafter folder whose config.json names the layer ids")
    p.add_argument("--tokens", type=int, metavar="N", help="run the model on the first N valid tokens only")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="where the model runs (default: CUDA when present)")
    p.add_argument("--ids-from", metavar="OTHER", help="take token ids from this sample (SAMPLE has none)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--slots", type=int, metavar="K", help="SAMPLE is a bare [T, K*H] tensor with K slots")
    p.add_argument("--hidden", type=int, metavar="H", help="SAMPLE is a bare [T, K*H] tensor with hidden size H")

    add_connection_arguments(p)


def run(args: argparse.Namespace) -> int:
    if (usage := below_one(args, "identify", "tokens", "slots", "hidden")) is not None:
        return usage
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.target import TargetError

    try:
        result = identify_target(args)
    except (SourceError, TargetError, OSError) as err:
        print(f"eagle3-tui identify: {err}", file=sys.stderr)
        return 2
    if "error" in result:
        print(f"eagle3-tui identify: {result['error']}", file=sys.stderr)
        return 2

    if args.json:
        print(json_line(result), flush=True)
    else:
        print(format_identify(result), flush=True)
    return exit_code(result)


def exit_code(result: IdentifyResult) -> int:
    if "error" in result:
        return 2

    return 1 if blocking(result["findings"]) else 0


def identify_target(args: argparse.Namespace) -> IdentifyResult:
    """Identify where the sample and the model are, through that machine's Source."""
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import options_on_host, run_on_source
    from eagle3_tui.target import parse_target

    target = parse_target(args.sample)
    opts = {
        **options_on_host(args, target, {"model": "--model", "drafter": "--drafter", "ids_from": "--ids-from"}),
        "tokens": args.tokens, "device": args.device, "slots": args.slots, "hidden": args.hidden,
    }

    result = run_on_source(target, args, lambda source: source.identify(target.path, **opts))
    result["path"] = args.sample
    return result


# ------------------------------------------------------------------------------ human output


def _f(v: float | None, digits: int = 4) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def format_identify(r: IdentifyResult) -> str:
    out = [printable(r["path"])]
    facts = [f"model {r['model']}", f"L {r['layers']}", f"{r['tokens']} tokens", f"H {r['hidden']}"]
    if r.get("device"):
        facts.append(f"{r['device']} {r.get('model_dtype', '')}".strip())
    facts.append(f"computed {r.get('computed', 'local')}")
    out.append("  " + " | ".join(facts))
    out += [f"  assumed: {a}" for a in r.get("assumptions", [])]
    findings = r["findings"]
    serious = [f for f in findings if f["severity"] != "info"]
    out.append("FINDINGS" if serious else "FINDINGS: every slot identified")
    for f in findings:
        out.append(f"  {f['severity'].upper():<7} {f['code']:<16} {f['message']}")
    out.append("")
    cols = "  {:<7} {:>9} {:>8} {:>7} {:>12} {:>7}  {}"
    out.append(cols.format("slot", "b", "cosine", "ratio", "runner-up", "margin", "status"))
    for s in r["slots"]:
        if s.get("fault"):  # what the slot holds instead: its own cosine and margin
            fault = s["fault"]
            out.append(cols.format(s["label"], fault["short"], _f(fault["cosine"]), "-", "-",
                                   _f(fault.get("margin"), 3), s["status"]))
            continue
        b = (str(s["boundary"]) if s["boundary"] is not None
             else "post-norm" if s.get("norm") == "post" else f"({s['nearest']})")
        second = s.get("second")
        up = (f"b={second['boundary']} {_f(second.get('cosine'), 3)}"
              if second and second.get("boundary") is not None else "-")
        out.append(cols.format(s["label"], b, _f(s["cosine"]), _f(s["norm_ratio"], 3), up,
                               _f(s.get("margin"), 3), s["status"]))
    fin = r.get("final")
    if fin and fin.get("fault"):
        fault = fin["fault"]
        out.append(cols.format("final", fault["short"], _f(fault["cosine"]), "-", "-",
                               _f(fault.get("margin"), 3), fin["status"]))
    elif fin:
        where = f"{fin['norm']}-norm" if fin.get("norm") else (
            f"b={fin['boundary']}" if fin.get("boundary") is not None else f"({fin.get('nearest')})")
        out.append(cols.format("final", where, _f(fin["cosine"]), _f(fin.get("norm_ratio"), 3), "-", "-",
                               fin["status"]))
    out.append("  b: 0 embeddings, i+1 output of layer i, L before the final norm; (n): nearest, not a match")
    if any(p.get("fault") for p in [*r["slots"], fin or {}]):
        out.append("  faults: 5+1 b=5 one token late (5-1 early); 5mlp, 5att, 5a+m layer 5's MLP, attention, "
                   "both, without the residual; 5mid inside layer 5; 5nrm layer 5's normalized input")
    return "\n".join(out)


# ------------------------------------------------------------------------------ --model elsewhere


def add_model_argument(p: argparse.ArgumentParser, what: str) -> None:
    """`--model DIR` of summary and compare: identify the slots against the target model."""
    p.add_argument("--model", metavar="DIR",
                   help=f"the target model's Hugging Face folder, on the data's machine: {what} "
                   "(needs torch and transformers there: pip install eagle3-tui[model])")
