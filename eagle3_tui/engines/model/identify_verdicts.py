"""From the forward's scores to identify's answer: per slot, the boundary it holds (within the
capture's noise), the fault that explains it (capture_faults.py), or why nothing does.

Standard library only at module level (shipped to the remote box with the engines).
"""

from __future__ import annotations

import math

from eagle3_tui.engines.model import capture_faults
from eagle3_tui.engines.model.capture_faults import NEAR_COS
from eagle3_tui.engines.model.conventions import convention_finding
from eagle3_tui.engines.results.findings import Finding, finding, sort_findings
from eagle3_tui.engines.results.identify import CaptureFault, IdentifiedPart, IdentifyResult

#: |median norm ratio - 1| beyond which a matched slot differs by a scale (noise: <= 0.0021)
SCALE_TOL = 0.02
#: best mean cosine below which a slot is from another model or prompt, not a noisy capture
UNRELATED_COS = 0.5


def _f(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def _name(col: int, layers: int) -> int | str:
    return "post" if col == layers + 1 else col


def _where(col: int | str | None, layers: int) -> str:
    return "the final norm's output" if col in ("post", layers + 1) else f"b={col}"


def slot_verdict(label: str, p: int, scores, layers: int, tol: float, *, borrowed_ids: bool = False
                 ) -> tuple[IdentifiedPart, list[Finding]]:
    """Best column among b = 0..L and the post-norm output (HF hidden_states[L] is post-norm, so a
    slot taken there is one of the documented captures; it is reported as norm "post")."""
    cos, ratio = scores.cos[p], scores.ratio[p]
    order = [c for c in cos.argsort(descending=True).tolist() if math.isfinite(float(cos[c]))] or [0]
    best, second = order[0], order[1] if len(order) > 1 else None
    best_cos, best_ratio = _f(cos[best]), _f(ratio[best])
    second_cos = _f(cos[second]) if second is not None else None
    row: IdentifiedPart = {
        "label": label, "boundary": None, "cosine": best_cos, "norm_ratio": best_ratio,
        "nearest": _name(best, layers), "distance": None if best_cos is None else 1 - best_cos,
        "tolerance": tol,
        "second": {"boundary": _name(second, layers), "cosine": second_cos} if second is not None else None,
        "margin": (best_cos - second_cos) if second_cos is not None and best_cos is not None else None,
        "status": "unmatched",
    }
    where = _where(best, layers)
    if best_cos is not None and 1 - best_cos <= tol:
        return row, _matched(row, label, best, second, layers, tol)
    fault, findings = capture_faults.explain(label, p, scores, layers, tol)
    if fault is not None:
        row["status"], row["fault"] = _status(fault), fault
        if fault["kind"] == "lag" and isinstance(fault["boundary"], int):  # not "post"
            row["boundary"] = fault["boundary"]  # the right layer, on the wrong rows
        return row, findings
    if best_cos is not None and best_cos >= NEAR_COS:
        row["status"] = "inexact"
        return row, [finding("slot_inexact", "warning",
                             f"{label} is near {where} but not it: cosine {best_cos:.4f}, 1 - cosine "
                             f"{1 - best_cos:.1e} is {(1 - best_cos) / tol:.0f}x what a capture's noise "
                             f"gives (<= {tol:.1e}); no state of the fault catalogue is closer: a state "
                             "from inside a layer of another kind, a lossy capture or another checkpoint",
                             slot=label)]
    if best_cos is not None and best_cos >= UNRELATED_COS:
        row["status"] = "noisy"
        return row, [finding("slot_unmatched", "warning",
                             f"{label} matches no boundary of this model (nearest {where}, cosine "
                             f"{best_cos:.3f}): heavily noised or quantised, or from another "
                             "checkpoint of the model", slot=label)]
    shown = "-" if best_cos is None else f"{best_cos:.3f}"
    source = ("another model, or the token ids given are another prompt's" if borrowed_ids
              else "another model (or the file's token ids are not the ones its states were computed on)")
    return row, [finding("slot_unmatched", "warning",
                         f"{label} matches no boundary of this model, shifted or not, nor any state "
                         f"inside its layers (best cosine {shown} at {where}): from {source}", slot=label)]


def _status(fault: CaptureFault) -> str:
    kind = fault["kind"]
    return {"lag": "lag", "normalized": "normalized", "mid": "mid_layer"}.get(kind, "no_residual")


def _matched(row: IdentifiedPart, label: str, best: int, second: int | None, layers: int, tol: float
             ) -> list[Finding]:
    where = _where(best, layers)
    findings: list[Finding] = []
    best_cos, best_ratio = row["cosine"], row["norm_ratio"]
    if best == layers + 1:
        row["norm"] = "post"
    else:
        row["boundary"] = best
    if best_ratio is not None and abs(best_ratio - 1) > SCALE_TOL:
        row["status"] = "scaled"
        findings.append(finding("slot_scaled", "warning", f"{label} is {where} (cosine {best_cos:.4f}) scaled by "
                                f"{best_ratio:.3g}: same direction, another magnitude", slot=label))
    else:
        row["status"] = "match"
    runner = row["second"]["cosine"] if row["second"] else None
    if runner is not None and 1 - runner <= tol:
        findings.append(finding("slot_ambiguous", "info", f"{label}: {where} and {_where(second, layers)} both match "
                                f"(cosine {best_cos:.4f} vs {runner:.4f}); {where} is the closer", slot=label))
    return findings


def final_verdict(p: int, scores, layers: int, said: str | None, tol: float
                  ) -> tuple[IdentifiedPart, list[Finding]]:
    """pre (b = L) or post (the final norm's output), by cosine, then by norm ratio."""
    cos, ratio = scores.cos[p], scores.ratio[p]
    pre, post = layers, layers + 1
    cands = []
    for col, norm in ((post, "post"), (pre, "pre")):
        c, r = _f(cos[col]), _f(ratio[col])
        if c is not None and 1 - c <= tol:
            cands.append((abs(math.log(r)) if r and r > 0 else float("inf"), norm, c, r))
    if cands:
        _, norm, c, r = min(cands)
        final: IdentifiedPart = {"norm": norm, "cosine": c, "norm_ratio": r, "boundary": layers if norm == "pre" else None,
                 "status": "match"}
        findings: list[Finding] = []
        if r is not None and abs(r - 1) > SCALE_TOL:
            final["status"] = "scaled"
            findings.append(finding("final_scaled", "warning", f"final is the {norm}-norm state scaled by {r:.3g}",
                                    slot="final"))
        if said and said != norm:
            findings.append(finding("final_norm", "warning",
                                    f"final is {norm}-norm (cosine {c:.4f}) but the file's schema says {said}-norm",
                                    slot="final"))
        return final, findings
    best = int(cos[: layers + 2].argmax())
    c = _f(cos[best])
    final = {"norm": None, "cosine": c, "norm_ratio": _f(ratio[best]),
             "boundary": best if best <= layers and c is not None and 1 - c <= tol else None,
             "nearest": _name(best, layers), "status": "unmatched"}
    if final["boundary"] is not None:
        msg = (f"final matches neither the final norm's input nor its output but b={best} "
               f"(cosine {c:.4f}): an auxiliary layer stored as the final state")
        return final, [finding("final_unmatched", "warning", msg, slot="final")]
    fault, findings = capture_faults.explain("final", p, scores, layers, tol, prefix="final")
    if fault is not None:
        final["status"], final["fault"] = _status(fault), fault
        if fault["kind"] == "lag":
            final["norm"] = "post" if fault["boundary"] == "post" else ("pre" if fault["boundary"] == pre else None)
        return final, findings
    msg = (f"final matches neither b={layers} (pre-norm, cosine {_f(cos[pre]):.3f}) nor the "
           f"post-norm output (cosine {_f(cos[post]):.3f}), shifted or not: noised or from another model")
    return final, [finding("final_unmatched", "warning", msg, slot="final")]


def result(sample, model: str, layers: int, n: int, scores, drafter_ids, *, borrowed_ids: bool = False
           ) -> IdentifyResult:
    tol = capture_faults.tolerance(sample.dtype)
    slots: list[IdentifiedPart] = []
    findings: list[Finding] = []
    for i, s in enumerate(sample.slots):
        row, f = slot_verdict(s.label, i, scores, layers, tol, borrowed_ids=borrowed_ids)
        row["said"] = s.boundary
        if s.boundary is not None and row["boundary"] is not None and s.boundary != row["boundary"]:
            f.append(finding("boundary_label", "warning",
                             f"{s.label}: the file says b={s.boundary}, the states are b={row['boundary']}",
                             slot=s.label))
        slots.append(row)
        findings += f
    final: IdentifiedPart | None = None
    if sample.final is not None:
        final, f = final_verdict(len(sample.slots), scores, layers, sample.final_norm, tol)
        findings += f
    parts = [r.get("fault") for r in slots] + ([final.get("fault")] if final else [])
    shift = capture_faults.common_lag(parts)
    if shift is not None:
        findings.insert(0, capture_faults.capture_lag_finding(shift, len(parts)))
    # the post-norm output takes index L + 1 where conventions are matched (HF hidden_states[L])
    identified = [layers + 1 if r.get("norm") == "post" else r["boundary"] for r in slots]
    conventions, conv_findings = convention_finding(identified, layers, drafter_ids, sample.schema)
    findings = conv_findings + findings
    sort_findings(findings)
    return {
        "path": sample.path, "model": model, "layers": layers, "schema": sample.schema,
        "tokens": n, "hidden": sample.hidden, "dtype": sample.dtype, "tolerance": tol,
        "slots": slots, "final": final,
        "conventions": conventions, "findings": findings, "assumptions": list(sample.assumptions),
        "matrix": [[_f(v) for v in row] for row in scores.cos.tolist()],
    }
