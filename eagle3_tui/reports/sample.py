"""The sample view's report: the header, warnings and assumptions, the numbers per slot, what
`I` identified (with its findings) and, with --drafter, the drafter's acceptance."""

from __future__ import annotations

import posixpath
from datetime import datetime
from typing import cast

from eagle3_tui.engines.model.accept_words import TARGETS, targets
from eagle3_tui.engines.results.accept import AcceptResult
from eagle3_tui.engines.results.findings import Finding
from eagle3_tui.engines.results.identify import IdentifyBrief
from eagle3_tui.engines.results.summary import PartSummary, Summary
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

HEADER_KEYS = ("path", "schema", "tokens", "valid_tokens", "hidden", "dtype", "k", "final_norm", "loss_mask",
               "padding", "computed")
#: the per-part columns of the Markdown table (the JSON holds every number of a part)
PART_COLUMNS = (("b", "boundary"), ("norm mean", "norm_mean"), ("norm min", "norm_min"), ("norm max", "norm_max"),
                ("mean", "mean"), ("std", "std"), ("abs max", "absmax"), ("NaN", "nan"), ("Inf", "inf"),
                ("first non-finite row", "first_nonfinite_row"))
ACCEPT_KEYS = ("drafter", "top1", "tau", "steps", "rows", "rows_from", "target_source", "against_ids", "notes",
               "error")


class SampleReport(Envelope):
    """The sample view's export (its JSON), after the envelope's keys."""

    sample: Summary  # the summary's HEADER_KEYS
    error: str | None
    findings: list[Finding]  # identify's warnings and errors (IdentifyBrief's)
    warnings: list[str]
    assumptions: list[str]
    parts: list[PartSummary]  # each part's numbers (scalars: no per-token lists), labelled
    identify: IdentifyBrief | None  # without its findings (above)
    acceptance: AcceptResult | None  # its ACCEPT_KEYS


def sample_report(summary: Summary, *, where: str, acceptance: AcceptResult | None = None,
                  created: datetime | None = None) -> Report[SampleReport]:
    ident: IdentifyBrief = summary.get("identify") or {}
    parts = [_part(p, p.get("label") or f"aux{i}") for i, p in enumerate(summary.get("slots") or [])]
    if (final := summary.get("final")) is not None:
        parts.append(_part(final, "final"))
    # the header, identify and acceptance keep some of their keys: what they are stays what it was
    data: SampleReport = {
        **envelope("sample", where, created),
        "sample": cast(Summary, {k: summary.get(k) for k in HEADER_KEYS if k in summary}),
        "error": summary.get("error"),
        "findings": list(ident.get("findings") or []),
        "warnings": [str(w) for w in summary.get("warnings") or []],
        "assumptions": [str(a) for a in summary.get("assumptions") or []],
        "parts": parts,
        "identify": cast(IdentifyBrief, {k: v for k, v in ident.items() if k != "findings"}) or None,
        "acceptance": None if acceptance is None else cast(AcceptResult, {k: acceptance.get(k) for k in ACCEPT_KEYS
                                                                          if k in acceptance}),
    }
    name = posixpath.basename(str(summary.get("path") or "sample"))
    return Report("sample", name, data, _markdown(data, name))


def _part(part: PartSummary, label: str) -> PartSummary:
    out = cast(PartSummary, scalars(part) or {})  # the part's numbers, without its per-token lists
    out["label"] = label
    if isinstance(identified := part.get("identified"), dict):
        out["identified"] = identified
    return out


def _markdown(d: SampleReport, name: str) -> str:
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
        b: int | str | None = p.get("boundary")
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
        if (conv := i.get("convention")) and conv.get("message"):
            out += ["", f"Layer ids: {cell(conv['message'])}"]
    acc = d["acceptance"]
    if acc:
        out += ["", "## Drafter acceptance", "",
                f"not scored: {cell(acc['error'])}" if acc.get("error") else
                f"top-1 {pct(acc.get('top1'))}, τ {num(acc.get('tau'))} over {num(acc.get('rows'))} rows"
                + (" · per step " + ", ".join(pct(x) for x in acc["steps"]) if acc.get("steps") else "")
                + (f", against {targets(acc)}" if acc.get("target_source") else "")]
        if (ids := acc.get("against_ids")) and not acc.get("error"):
            out.append(f"\nThe same drafts against {TARGETS['ids']}: top-1 {pct(ids.get('top1'))}, "
                       f"τ {num(ids.get('tau'))} · per step " + ", ".join(pct(x) for x in ids.get("steps") or []))
    return "\n".join(out) + "\n"
