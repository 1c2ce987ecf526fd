"""The sample view's report: the header, warnings and assumptions, the numbers per slot, what
`I` identified (with its findings) and, with --drafter, the drafter's acceptance."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from eagle3_tui.engines.results import AcceptResult, Summary
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

HEADER_KEYS = ("path", "schema", "tokens", "valid_tokens", "hidden", "dtype", "k", "final_norm", "loss_mask",
               "padding", "computed")
#: the per-part columns of the Markdown table (the JSON holds every number of a part)
PART_COLUMNS = (("b", "boundary"), ("norm mean", "norm_mean"), ("norm min", "norm_min"), ("norm max", "norm_max"),
                ("mean", "mean"), ("std", "std"), ("abs max", "absmax"), ("NaN", "nan"), ("Inf", "inf"),
                ("first non-finite row", "first_nonfinite_row"))
ACCEPT_KEYS = ("drafter", "top1", "tau", "steps", "rows", "rows_from", "notes", "error")


def sample_report(summary: Summary, *, where: str, acceptance: AcceptResult | None = None,
                  created: datetime | None = None) -> Report:
    data = envelope("sample", where, created)
    data["sample"] = {k: summary.get(k) for k in HEADER_KEYS if k in summary}
    data["error"] = summary.get("error")
    ident = summary.get("identify") or {}
    data["findings"] = list(ident.get("findings") or [])
    data["warnings"] = [str(w) for w in summary.get("warnings") or []]
    data["assumptions"] = [str(a) for a in summary.get("assumptions") or []]
    data["parts"] = [_part(p, p.get("label") or f"aux{i}") for i, p in enumerate(summary.get("slots") or [])]
    if summary.get("final") is not None:
        data["parts"].append(_part(summary["final"], "final"))  # type: ignore[arg-type]
    data["identify"] = {k: v for k, v in ident.items() if k != "findings"} or None
    data["acceptance"] = None if acceptance is None else {k: acceptance.get(k) for k in ACCEPT_KEYS
                                                          if k in acceptance}
    name = posixpath.basename(str(summary.get("path") or "sample"))
    return Report("sample", name, data, _markdown(data, name))


def _part(part: Mapping[str, Any], label: str) -> dict[str, Any]:
    out = scalars(part) or {}
    out["label"] = label
    if isinstance(part.get("identified"), dict):
        out["identified"] = part["identified"]
    return out


def _markdown(d: dict[str, Any], name: str) -> str:
    s = d["sample"]
    out = [f"# eagle3-tui sample: {cell(name)}", "", f"Exported {d['created']} · computed on {cell(d['where'])}", "",
           f"- path: {code(s.get('path', '?'))}"]
    if d["error"]:
        out += [f"- not readable as a sample: {cell(d['error'])}"]
        return "\n".join(out) + "\n"
    out.append(f"- {cell(str(s.get('schema', '?')))} · T {num(s.get('tokens'))} (valid {num(s.get('valid_tokens'))})"
               f" · H {num(s.get('hidden'))} · k {num(s.get('k'))} · {cell(str(s.get('dtype', '?')))}"
               + (f" · final {s['final_norm']}-norm" if s.get("final_norm") else ""))
    lm, pad = s.get("loss_mask") or {}, s.get("padding") or {}
    if lm:
        out.append(f"- loss mask: {num(lm.get('ones'))} of {num(lm.get('total'))} rows")
    if pad.get("trailing"):
        out.append(f"- {num(pad['trailing'])} trailing padding rows")
    out += ["", "## Findings", "", *findings_lines(d["findings"])]
    out += [f"- **WARNING** {cell(w)}" for w in d["warnings"]]
    out += [f"- assumed: {cell(a)}" for a in d["assumptions"]]
    rows = []
    for p in d["parts"]:
        ident = p.get("identified") or {}
        b = p.get("boundary")
        if ident:
            at = ident.get("boundary") if ident.get("boundary") is not None else ident.get("norm") or "?"
            cos = ident.get("cosine")
            b = f"{at}*" + (f" (cos {cos:.4f})" if isinstance(cos, float) else "")
        rows.append([p["label"], b, *(p.get(k) for _, k in PART_COLUMNS[1:])])
    if rows:
        out += ["", "## Per slot", "", *table(["slot", *(t for t, _ in PART_COLUMNS)], rows)]
    if d["identify"]:
        i = d["identify"]
        out += ["", "## Identified (I)", "", "b*: the boundary of the model the states match"
                + (f" (model {code(i.get('model', '?'))}, L = {num(i.get('layers'))})" if not i.get("error") else
                   f": not identified: {cell(i['error'])}")]
        if (i.get("convention") or {}).get("message"):
            out += ["", f"Layer ids: {cell(i['convention']['message'])}"]
    acc = d["acceptance"]
    if acc:
        out += ["", "## Drafter acceptance", "",
                f"not scored: {cell(acc['error'])}" if acc.get("error") else
                f"top-1 {pct(acc.get('top1'))}, τ {num(acc.get('tau'))} over {num(acc.get('rows'))} rows"
                + (" · per step " + ", ".join(pct(x) for x in acc["steps"]) if acc.get("steps") else "")]
    return "\n".join(out) + "\n"
