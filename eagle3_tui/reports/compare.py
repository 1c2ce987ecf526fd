"""The compare view's report: findings, both sides, the alignment, the numbers per slot pair,
the cross-slot matrix and, with --drafter, the acceptance of A, B and B re-ordered."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from eagle3_tui.engines.results import AcceptResult, ComparisonResult
from eagle3_tui.reports.model import (
    Report,
    cell,
    code,
    envelope,
    findings_lines,
    num,
    pct,
    scalars,
    table,
)

SIDE_KEYS = ("path", "schema", "tokens", "valid_tokens", "hidden", "k", "dtype", "final_norm", "boundaries",
             "assumptions")
ALIGN_KEYS = ("method", "offset", "length", "a_start", "b_start", "b_end", "diverges_at", "on_padding")
#: the per-pair columns of the Markdown table (the JSON holds every number of a pair)
PAIR_COLUMNS = (("cos mean", "cos_mean"), ("cos min", "cos_min"), ("B/A norm (median)", "norm_ratio_median"),
                ("spread", "norm_ratio_std"), ("max abs err", "max_abs_err"), ("rel L2", "rel_l2_err"),
                ("bf16 ok", "within_bf16_tol"), ("worst B row", "worst_b_row"), ("worst A row", "worst_a_row"))
#: columns shown as the view shows them: cosines with 4 decimals, ratios with 3, shares in %
FIXED = {"cos_mean": 4, "cos_min": 4, "norm_ratio_median": 3, "norm_ratio_std": 3, "rel_l2_err": 3}
ACCEPT_KEYS = ("top1", "tau", "steps", "rows", "rows_from", "order", "error")


def compare_report(result: ComparisonResult, *, where: str, acceptance: Mapping[str, AcceptResult | None] | None = None,
                   created: datetime | None = None) -> Report:
    """`acceptance`: {"a", "b", "fixed"} results of the drafter (None: no --drafter)."""
    a: Mapping[str, object] = result.get("a") or {}
    b: Mapping[str, object] = result.get("b") or {}
    data = envelope("compare", where, created)
    data["a"] = {k: a[k] for k in SIDE_KEYS if k in a}
    data["b"] = {k: b[k] for k in SIDE_KEYS if k in b}
    data["error"] = result.get("error")
    data["findings"] = list(result.get("findings") or [])
    data["alignment"] = {k: (result.get("alignment") or {}).get(k) for k in ALIGN_KEYS} if result.get("alignment") else None
    data["slots"] = [scalars(s) for s in result.get("slots") or []]
    data["final"] = scalars(result.get("final"))
    data["matrix"] = result.get("matrix")
    data["acceptance"] = None if acceptance is None else {
        side: None if r is None else {k: r.get(k) for k in ACCEPT_KEYS if k in r}
        for side, r in acceptance.items()}
    subject = f"{_name(a)}-vs-{_name(b)}"
    return Report("compare", subject, data, _markdown(data))


def _name(side: Mapping[str, object]) -> str:
    return posixpath.basename(str(side.get("path") or "?"))


def _pair(m: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for _, key in PAIR_COLUMNS:
        v = m.get(key)
        if isinstance(v, float) and key in FIXED:
            v = f"{v:.{FIXED[key]}f}"
        elif isinstance(v, float) and key == "within_bf16_tol":
            v = pct(v)
        out.append(v)
    return out


def _markdown(d: dict[str, Any]) -> str:
    out = [f"# eagle3-tui compare: {cell(_name(d['a']))} (A, training) vs {cell(_name(d['b']))} (B, inference)",
           "", f"Exported {d['created']} · computed on {cell(d['where'])}", ""]
    for side, label in (("a", "A (training)"), ("b", "B (inference)")):
        s = d[side]
        out.append(f"- **{label}**: {code(s.get('path', '?'))} · {cell(str(s.get('schema', '?')))} · "
                   f"T {num(s.get('tokens'))} (valid {num(s.get('valid_tokens'))}) · H {num(s.get('hidden'))} · "
                   f"k {num(s.get('k'))} · {cell(str(s.get('dtype', '?')))}")
    out += ["", "## Findings", ""]
    if d["error"]:
        out += [f"The comparison could not run: {cell(d['error'])}", ""]
    out += findings_lines(d["findings"])
    al = d["alignment"]
    if al:
        out += ["", "## Alignment", "",
                f"By {cell(str(al.get('method')))}: B row t = A row t{al.get('offset', 0):+d}, "
                f"{num(al.get('length'))} rows compared"
                + (f", diverging at B row {al['diverges_at']}" if al.get("diverges_at") is not None else "") + "."]
    if d["slots"] or d["final"]:
        rows = [[f"B{s.get('b')} ~ A{s.get('a')}", *_pair(s)] for s in d["slots"]]
        if d["final"]:
            rows.append(["final", *_pair(d["final"])])
        out += ["", "## Per slot pair", "", *table(["pair", *(t for t, _ in PAIR_COLUMNS)], rows)]
    if d["matrix"]:
        m = d["matrix"]
        out += ["", "## Cross-slot mean cosine (rows: B slots, columns: A slots)", "",
                *table(["", *(f"A{i}" for i in range(len(m[0]) if m else 0))],
                       [[f"B{j}", *("–" if v is None else f"{v:.3f}" for v in row)]
                        for j, row in enumerate(m)])]
    if d["acceptance"]:
        out += ["", "## Drafter acceptance", ""]
        names = {"a": "A", "b": "B", "fixed": "B re-ordered"}
        for side, r in d["acceptance"].items():
            if r is not None:
                out.append(f"- {names.get(side, side)}: " + (f"not scored: {cell(r['error'])}" if r.get("error") else
                           f"top-1 {pct(r.get('top1'))}, τ {num(r.get('tau'))} over {num(r.get('rows'))} rows"))
    return "\n".join(out) + "\n"
