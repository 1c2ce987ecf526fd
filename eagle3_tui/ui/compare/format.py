"""Pure helpers for the compare view: what a comparison's numbers read as, without Textual.

The thresholds are the engine's own (engines/compare/thresholds.py), so a cell is coloured "match" exactly
when the engine would call the two parts the same. Importing them does not import torch.
"""

from __future__ import annotations

from collections.abc import Mapping

from eagle3_tui.engines.compare import BF16_ATOL, BF16_RTOL, MATCH_COS, UNRELATED_COS
from eagle3_tui.engines.finding_codes import CODES
from eagle3_tui.engines.results.compare import ComparisonResult, PairMetrics, SideHeader
from eagle3_tui.engines.results.findings import Finding

#: the finding codes in plain words (engines/finding_codes.py, the one list; the code itself stays
#: visible for searching the docs)
TITLES = {c.code: c.title for c in CODES.values()}

SEVERITY_MARK = {"error": "✗", "warning": "⚠", "info": "ℹ"}

METHODS = {
    "ids": "by token ids",
    "hidden": "by hidden states",
    "position": "by position (nothing better matched)",
}


def pairs(result: ComparisonResult) -> list[tuple[str, PairMetrics]]:
    """(short label, metrics) for every compared pair: slots 0..k-1, then "f" for the final."""
    out = [(str(m.get("a", i)), m) for i, m in enumerate(result.get("slots") or [])]
    if final := result.get("final"):
        out.append(("f", final))
    return out


def row_count(result: ComparisonResult) -> int:
    rows = result.get("rows")
    if rows:
        return int(rows.get("count") or 0)
    if pairs(result):  # an older result: the per-token lists still say how many
        return len(pairs(result)[0][1].get("per_token_cos") or [])
    return 0


def worst_row(result: ComparisonResult) -> tuple[int, str, PairMetrics] | None:
    """(row index in the token table, pair label, metrics) of the pair whose worst token has the
    largest relative error: the token `w` jumps to. None when no pair was measured."""
    best: tuple[int, str, PairMetrics] | None = None
    best_err = 0.0
    b_start = (result.get("alignment") or {}).get("b_start", 0)
    for label, m in pairs(result):
        err, row = m.get("worst_rel_err"), m.get("worst_b_row")
        if err is None or row is None:
            continue
        if best is None or err > best_err:
            best, best_err = (row - b_start, label, m), err
    return best


def cos_kind(value: float | None) -> str:
    """'match' (the same states, as the engine judges), 'near', 'far' (unrelated) or 'none'."""
    if value is None:
        return "none"
    if value >= MATCH_COS:
        return "match"
    if value >= UNRELATED_COS:
        return "near"
    return "far"


def cos_text(value: float | None, width: int = 6) -> str:
    """A cosine in `width` characters (right-aligned), at most 4 decimals; fewer when negative
    and narrow. None (no finite value) reads 'nan'."""
    if value is None:
        return "nan".rjust(width)
    digits = min(4, max(1, width - 2) if value >= 0 else max(1, width - 3))
    text = f"{value:.{digits}f}"
    if text.startswith("-0.") and float(text) == 0:
        text = f"{0:.{digits}f}"
    return text.rjust(width)


def within_bf16(a: float | None, b: float | None) -> bool:
    """Whether two values agree up to bfloat16 rounding (the engine's per-element tolerance)."""
    if a is None or b is None:
        return a is None and b is None
    return abs(b - a) <= BF16_RTOL * abs(a) + BF16_ATOL


def serious(result: ComparisonResult) -> list[Finding]:
    return [f for f in result.get("findings") or [] if f.get("severity") in ("warning", "error")]


def side_facts(header: SideHeader) -> str:
    """One line about one side: schema, T (valid), H, k, dtype, ids."""
    t = f"T {header.get('tokens')}"
    if header.get("valid_tokens") not in (None, header.get("tokens")):
        t += f" ({header['valid_tokens']} valid)"
    facts = [str(header.get("schema") or "?"), t, f"H {header.get('hidden')}", f"k {header.get('k')}",
             str(header.get("dtype") or "?")]
    if header.get("final"):
        facts.append(f"final {header['final_norm']}-norm" if header.get("final_norm") else "final")
    facts.append("ids" if header.get("ids") else "no ids")
    return " · ".join(facts)


def text_error(result: Mapping[str, object]) -> str | None:
    """Why a comparison has no token text (the tokenizer's error; not a ComparisonResult key)."""
    error = result.get("text_error")
    return str(error) if error else None


def alignment_text(result: ComparisonResult) -> str:
    al = result.get("alignment") or {}
    if not al:
        return ""
    how = METHODS.get(str(al.get("method")), str(al.get("method")))
    text = f"aligned {how}: B row t = A row t{al.get('offset', 0):+d} · {al.get('length', 0)} rows compared"
    if al.get("on_padding"):
        text += f" · {al['on_padding']} more of B on A's padding"
    if al.get("diverges_at") is not None:
        text += f" · ids differ from B row {al['diverges_at']}"
    return text
