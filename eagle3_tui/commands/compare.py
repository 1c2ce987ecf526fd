"""`eagle3-tui compare A B`: a training sample against an inference capture, findings first.

Exit status: 0 when no finding is a warning or an error, 1 when one is, 2 when an input cannot
be loaded (or reached). Both files on one SSH host are compared on that host (only the summary
travels); local files in this process.
"""

from __future__ import annotations

import argparse
import sys

from eagle3_tui.commands._options import (
    add_connection_arguments,
    add_tokenizer_argument,
    below_one,
    json_line,
)
from eagle3_tui.commands.identify import add_model_argument
from eagle3_tui.engines.results.compare import ComparisonResult, SideHeader
from eagle3_tui.engines.results.findings import blocking
from eagle3_tui.names import printable
from eagle3_tui.sources.base import SourceError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="A", help="training sample (local path or host:path)")
    p.add_argument("b", metavar="B", help="inference capture (local path or host:path, same machine as A)")
    p.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    p.add_argument("--slots", type=int, metavar="K", help="B is a bare [T, K*H] tensor with K slots")
    p.add_argument("--hidden", type=int, metavar="H", help="B is a bare [T, K*H] tensor with hidden size H")
    add_tokenizer_argument(p)

    add_model_argument(p, "identify both sides' slots and name the exact boundaries in the findings")
    add_connection_arguments(p)


def run(args: argparse.Namespace) -> int:
    if (usage := below_one(args, "compare", "slots", "hidden")) is not None:
        return usage
    try:
        result = compare_targets(args.a, args.b, args)
    except Exception as err:  # noqa: BLE001 - SourceError and friends: one line, never a traceback
        # lazy: kept off --help's imports (it loads every command module)
        from eagle3_tui.sources.base import SourceError
        from eagle3_tui.target import TargetError

        message = str(err) if isinstance(err, (SourceError, TargetError, OSError)) else (
            # last resort: nothing unforeseen in one comparison ends in a traceback
            f"unexpected {type(err).__name__} while comparing: {str(err).strip()[:200]}")
        if args.json:
            print(json_line({"a": {"path": args.a}, "b": {"path": args.b}, "error": message}), flush=True)
        print(f"eagle3-tui compare: {message}", file=sys.stderr)
        return 2
    if args.json:
        print(json_line(result), flush=True)
    else:
        print(format_comparison(result), flush=True)
    problem = _identify_problem(result)
    if problem:  # asked for and not done: said once, and the exit status says so
        print(f"eagle3-tui compare: --model: {problem}", file=sys.stderr)
        return 2
    return exit_code(result)


def _identify_problem(result: ComparisonResult) -> str | None:
    ident = result.get("identified")
    if not isinstance(ident, dict):
        return None
    if ident.get("error"):
        return ident["error"]
    briefs = (("A", ident.get("a")), ("B", ident.get("b")))
    sides = [f"{tag}: {brief['error']}" for tag, brief in briefs if brief and "error" in brief]
    return "; ".join(sides) or None


def exit_code(result: ComparisonResult) -> int:
    if "error" in result:
        return 2

    return 1 if blocking(result["findings"]) else 0


def compare_targets(a: str, b: str, args: argparse.Namespace) -> ComparisonResult:
    """Compare where the data is, through the Source of A's machine (this process for local
    files, the agent on the host for SSH targets)."""
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import run_on_source
    from eagle3_tui.sources.tokenizer import TokenizerChoice
    from eagle3_tui.target import parse_target

    ta, tb = parse_target(a), parse_target(b)
    if ta.place != tb.place:
        raise SourceError(f"A ({ta.display()}) and B ({tb.display()}) must be on the same machine")
    tokenizer = TokenizerChoice(getattr(args, "tokenizer", None))

    model = None
    if getattr(args, "model", None):
        from eagle3_tui.commands._targets import on_host

        model = on_host(args.model, ta, "--model")  # the model runs where the data is
    result = run_on_source(ta, args, lambda source: source.compare(
        ta.path, tb.path, slots=args.slots, hidden=args.hidden, tokenizer=tokenizer.on_source(ta),
        model=model))
    result = tokenizer.finish(result, ta)
    # show the paths as typed, host included
    for header, shown in ((result.get("a"), a), (result.get("b"), b)):
        if isinstance(header, dict):
            header["path"] = shown
    return result


# ------------------------------------------------------------------------------ human output


def _f(v: float | None, digits: int = 4) -> str:
    if v is None:
        return "-"
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
        return f"{v:.2e}"
    return f"{v:.{digits}f}"


def _side(tag: str, h: SideHeader) -> list[str]:
    t = f"T {h['tokens']}" + (f" (valid {h['valid_tokens']})" if h["valid_tokens"] != h["tokens"] else "")
    facts = [h["schema"], t, f"H {h['hidden']}", f"k {h['k']}", h["dtype"]]
    if h.get("final"):
        facts.append(f"final {h['final_norm']}-norm" if h.get("final_norm") else "final")
    facts.append("ids" if h.get("ids") else "no ids")
    lines = [f"{tag}  {printable(h['path'])}", f"   {' | '.join(facts)}"]
    lines += [f"   assumed: {note}" for note in h.get("assumptions", [])]
    return lines


def format_comparison(r: ComparisonResult) -> str:
    if "error" in r:
        lines = []
        for tag in ("a", "b"):
            side = r[tag]
            if "error" in side:
                lines.append(f"{tag.upper()}  {printable(side['path'])}: error: {side['error']}")
        return "\n".join(lines) or f"error: {r['error']}"
    out: list[str] = []
    findings = r["findings"]
    serious = [f for f in findings if f["severity"] != "info"]
    out.append("FINDINGS" if serious else "FINDINGS: none - B matches A within bf16 noise")
    for f in findings:
        out.append(f"  {f['severity'].upper():<7} {f['code']:<17} {f['message']}")
    out.append("")
    out += _side("A", r["a"])
    out += _side("B", r["b"])
    al = r["alignment"]
    how = {"ids": "by token ids", "hidden": "by hidden states", "position": "by position (nothing better matched)"}
    text = (f"aligned {how.get(al['method'], al['method'])}: B row t = A row t{al['offset']:+d}, "
            f"{al['length']} rows compared")
    if al.get("on_padding"):
        text += f", {al['on_padding']} more of B on A's padding (not compared)"
    if al.get("diverges_at") is not None:
        text += f", ids differ from B row {al['diverges_at']}"
    if r.get("computed"):
        text += f" (computed {r['computed']})"
    out += ["", text]
    if r.get("text_error"):  # --tokenizer was asked for and could not decode: the numbers stand
        out.append(f"token text: not shown: {r['text_error']}")
    final = r.get("final")
    rows = list(r["slots"]) + ([final] if final else [])
    if rows:
        cols = "  {:<6} {:>9} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8} {:>12}"
        heads = ("pair", "cos mean", "cos min", "B/A", "spread", "max|B-A|", "rel L2", "bf16 ok", "worst A row")
        out += ["", cols.format(*heads)]
        for m in rows:
            name = "final" if m["a"] == "final" else f"{m['a']}"
            if m.get("cos_mean") is None:
                out.append(cols.format(name, "-", "-", "-", "-", "-", "-", "-", "-"))
                continue
            within = m.get("within_bf16_tol")
            out.append(cols.format(
                name, _f(m["cos_mean"]), _f(m["cos_min"]), _f(m["norm_ratio_median"], 3),
                _f(m["norm_ratio_std"], 3), _f(m["max_abs_err"], 3), _f(m["rel_l2_err"], 3),
                f"{100 * within:.1f}%" if within is not None else "-",
                str(m["worst_a_row"])))
    matrix = r.get("matrix") or []
    if matrix and matrix[0]:
        out += ["", "  cross-slot mean cosine (rows: B slots, columns: A slots)"]
        out.append("        " + "".join(f"{'A' + str(i):>8}" for i in range(len(matrix[0]))))
        for j, row in enumerate(matrix):
            out.append(f"    B{j:<3}" + "".join(f"{_f(v, 3):>8}" for v in row))
    return "\n".join(out)
