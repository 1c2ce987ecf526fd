"""The compare view's report: findings, both sides, the alignment, the numbers per slot pair,
the cross-slot matrix and, with --drafter, the acceptance of A, B and B re-ordered."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypedDict, cast

from eagle3_tui.engines.model.accept_words import targets, why_b_differs
from eagle3_tui.engines.results.accept import AcceptResult
from eagle3_tui.engines.results.compare import ComparisonResult, PairMetrics, SideHeader
from eagle3_tui.engines.results.findings import Finding
from eagle3_tui.reports.model import (
    Envelope,
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
ACCEPT_KEYS = ("top1", "tau", "steps", "rows", "rows_from", "target_source", "against_ids", "order", "error")


class AlignmentRow(TypedDict):
    """The alignment's ALIGN_KEYS (None where it has not that key)."""

    method: str | None
    offset: int | None
    length: int | None
    a_start: int | None
    b_start: int | None
    b_end: int | None
    diverges_at: int | None
    on_padding: int | None


class CompareReport(Envelope):
    """The compare view's export (its JSON), after the envelope's keys."""

    roles: list[str]  # what A and B are: ["training", "inference"], the other way round after a swap
    a: SideHeader  # its SIDE_KEYS
    b: SideHeader
    error: str | None
    findings: list[Finding]
    alignment: AlignmentRow | None
    slots: list[PairMetrics]  # each pair's numbers (scalars: no per-token lists)
    final: PairMetrics | None
    matrix: list[list[float | None]] | None
    acceptance: dict[str, AcceptResult | None] | None  # "a", "b", "fixed": their ACCEPT_KEYS


def compare_report(result: ComparisonResult, *, where: str, acceptance: Mapping[str, AcceptResult | None] | None = None,
                   created: datetime | None = None,
                   roles: tuple[str, str] = ("training", "inference")) -> Report[CompareReport]:
    """`acceptance`: {"a", "b", "fixed"} results of the drafter (None: no --drafter). `roles`: what A
    and B are (the view's: the other way round after a swap)."""
    a: SideHeader = result.get("a") or {}
    b: SideHeader = result.get("b") or {}
    al = result.get("alignment")
    # the sides, pairs and acceptance keep some of their keys: what they are stays what it was
    data: CompareReport = {
        **envelope("compare", where, created),
        "roles": list(roles),
        "a": cast(SideHeader, _keep(a, SIDE_KEYS)),
        "b": cast(SideHeader, _keep(b, SIDE_KEYS)),
        "error": result.get("error"),
        "findings": list(result.get("findings") or []),
        "alignment": {"method": al.get("method"), "offset": al.get("offset"), "length": al.get("length"),
                      "a_start": al.get("a_start"), "b_start": al.get("b_start"), "b_end": al.get("b_end"),
                      "diverges_at": al.get("diverges_at"), "on_padding": al.get("on_padding")} if al else None,
        "slots": [cast(PairMetrics, scalars(s)) for s in result.get("slots") or []],
        "final": cast("PairMetrics | None", scalars(result.get("final"))),
        "matrix": result.get("matrix"),
        "acceptance": None if acceptance is None else {
            side: None if r is None else cast(AcceptResult, {k: r.get(k) for k in ACCEPT_KEYS if k in r})
            for side, r in acceptance.items()},
    }
    subject = f"{_name(a)}-vs-{_name(b)}"
    return Report("compare", subject, data, _markdown(data))


def _keep(d: Mapping[str, object], keys: tuple[str, ...]) -> dict[str, object]:
    """`d`'s `keys` it has, in the order of `keys`."""
    return {k: d[k] for k in keys if k in d}


def _name(side: Mapping[str, object]) -> str:
    return posixpath.basename(str(side.get("path") or "?"))


def _pair(m: PairMetrics) -> list[Any]:
    out: list[Any] = []
    for _, key in PAIR_COLUMNS:
        v = m.get(key)
        if isinstance(v, float) and key in FIXED:
            v = f"{v:.{FIXED[key]}f}"
        elif isinstance(v, float) and key == "within_bf16_tol":
            v = pct(v)
        out.append(v)
    return out


def _markdown(d: CompareReport) -> str:
    ra, rb = d["roles"]
    out = [f"# eagle3-tui compare: {cell(_name(d['a']))} (A, {ra}) vs {cell(_name(d['b']))} (B, {rb})",
           "", f"Exported {d['created']} · computed on {cell(d['where'])}", ""]
    for s, label in ((d["a"], f"A ({ra})"), (d["b"], f"B ({rb})")):
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
                           f"top-1 {pct(r.get('top1'))}, τ {num(r.get('tau'))} over {num(r.get('rows'))} rows"
                           + (f", against {targets(r)}" if r.get("target_source") else "")))
        a, b = d["acceptance"].get("a"), d["acceptance"].get("b")
        if a and b and (why := why_b_differs(a, b)):
            out += ["", "B is scored otherwise: " + cell("; ".join(why))]
    return "\n".join(out) + "\n"
