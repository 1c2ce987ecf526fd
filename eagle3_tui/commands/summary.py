"""`eagle3-tui summary PATH...`: per-slot statistics, as a table or as JSON lines."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="sample files (local or host:path)")
    p.add_argument("--json", action="store_true", help="one JSON object per file per line")
    p.add_argument("-k", type=int, default=5, metavar="N", help="first N values per token (default 5)")
    p.add_argument("--slots", type=int, metavar="K", help="number of slots in a bare [T, K*H] tensor")
    p.add_argument("--hidden", type=int, metavar="H", help="hidden size H of a bare [T, K*H] tensor")
    add_connection_arguments(p)


def add_connection_arguments(p: argparse.ArgumentParser) -> None:
    """SSH options shared by every command that takes targets (ignored for local paths)."""
    p.add_argument(
        "--remote-python",
        default="python3",
        metavar="PYTHON",
        help="Python with torch on the remote box (default: python3)",
    )
    p.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust an SSH host key seen for the first time (a changed key is always refused)",
    )


def run(args: argparse.Namespace) -> int:
    if args.k < 0:
        print("eagle3-tui summary: error: -k must be 0 or more", file=sys.stderr)
        return 2
    from eagle3_tui.commands._targets import summarize_targets

    failed = False
    for result in summarize_targets(args.paths, args):
        # a readable non-sample (vocab_mapping.pt) is reported as what it is, not as a failure
        failed |= "error" in result and not result.get("not_sample")
        if args.json:
            print(json.dumps(to_json_ready(result), allow_nan=False), flush=True)
        else:
            print(format_summary(result), flush=True)
    return 1 if failed else 0


def to_json_ready(obj: Any) -> Any:
    """Replace NaN/Inf floats with None so the output is strict JSON."""
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else None
    if isinstance(obj, dict):
        return {k: to_json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json_ready(v) for v in obj]
    return obj


def _num(v: float | None, width: int = 9) -> str:
    if v is None:
        return "-".rjust(width)
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
        return f"{v:.2e}".rjust(width)
    return f"{v:.4g}".rjust(width)


def _where(part: dict[str, Any]) -> str:
    if part.get("boundary") is not None:
        return f"b={part['boundary']}"
    if part.get("boundary_note"):
        return f"b={part['boundary_note']}"
    return "b=?"


def format_summary(r: dict[str, Any]) -> str:
    if r.get("not_sample"):
        contents = r.get("contents") or {}
        rows = [f"{r['path']}: not a hidden-state sample; it holds {len(contents)} entries:"]
        width = min(max((len(str(k)) for k in contents), default=0), 40)
        rows += [f"  {str(key):<{width}}  {desc}" for key, desc in contents.items()]
        return "\n".join(rows)
    if "error" in r:
        lines = [f"{r['path']}: error: {r['error']}"]
        return "\n".join(lines)
    pad = r["padding"]["trailing"]
    facts = [
        f"schema {r['schema']}",
        f"T {r['tokens']} (valid {r['valid_tokens']}{f', {pad} padding' if pad else ''})",
        f"H {r['hidden']}",
        f"k {len(r['slots'])} slots",
        r["dtype"],
    ]
    if r.get("loss_mask"):
        facts.append(f"loss mask {r['loss_mask']['ones']}/{r['loss_mask']['total']}")
    if r.get("computed"):
        facts.append(f"computed {r['computed']}")
    rows = [r["path"], "  " + " | ".join(facts)]
    cols = "  {:<7} {:<9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5} {:>5}"
    rows.append(cols.format("slot", "where", "norm", "norm min", "norm max", "mean", "std", "absmax", "NaN", "Inf"))
    parts = [(p, _where(p)) for p in r["slots"]]
    if r.get("final"):
        final = r["final"]
        where = f"{r['final_norm']}-norm" if r.get("final_norm") else _where(final)
        parts.append((final, where))
    for part, where in parts:
        numbers = [part[key] for key in ("norm_mean", "norm_min", "norm_max", "mean", "std", "absmax")]
        rows.append(cols.format(part["label"], where, *(_num(v) for v in numbers), part["nan"], part["inf"]))
    for note in r.get("assumptions", []):
        rows.append(f"  assumed: {note}")
    for warning in r.get("warnings", []):
        rows.append(f"  warning: {warning}")
    return "\n".join(rows)
