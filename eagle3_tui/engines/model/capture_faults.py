"""What a capture that matches no boundary holds instead: the catalogue of capture-code faults.

A slot is a boundary's state only when its distance from it (1 - mean cosine) is within what the
capture's dtype and path explain. Measured (tests/identify/test_capture_noise.py measures it
again): captures of Llamas whose neighbouring boundaries have mean cosine 0.96-0.98, the model
run in bf16, fp16 or float32 against identify's float32 run, with 1% kernel noise on top, give
1 - cosine <= 4e-4; an fp8 (e4m3) round trip adds up to 7e-4 more. The bounds below are four
times that: a state from inside a layer (the residual between attention and MLP sits 5e-3 to
2e-2 from the layer's output in such models) or a neighbouring boundary (2e-2 to 4e-2) is far
outside them.

When the nearest boundary is farther than the bound, every state of the catalogue that the
forward scored (identify_run.Scores) is ranked, and the best one within the bound names the
fault: a token lag or lead, a branch without the residual, the normalized input, the mid-layer
residual. Only when nothing explains the slot is it called unmatched.

Standard library only (shipped to the remote box with the engines).
"""

from __future__ import annotations

import math

from eagle3_tui.engines.results.findings import Finding, finding
from eagle3_tui.engines.results.identify import CaptureFault

#: 1 - mean cosine within which a slot holds a state (a capture in bf16, fp16 or float32)
TOLERANCE = 1.6e-3
#: the same for a capture stored in an 8-bit float (one more rounding of 3 mantissa bits)
TOLERANCE_FP8 = 2.7e-3
#: from here to the match bound a slot is "near" a boundary but not it (a middle layer's own
#: residual sits at 0.99 from its output; noise heavy enough to go below this is called noise)
NEAR_COS = 0.97

BRANCH_TEXT = {
    "mlp": "MLP output",
    "attn": "attention output",
    "branches": "attention + MLP output (its update)",
}


def tolerance(dtype: str | None) -> float:
    """The match bound for a capture stored in `dtype` (torch's name, e.g. "bfloat16")."""
    return TOLERANCE_FP8 if dtype and "float8" in dtype else TOLERANCE


def _f(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def candidates(p: int, scores, layers: int) -> list[CaptureFault]:
    """Every state part `p` was scored against except the unshifted boundaries, best first:
    {"kind": "lag"|"normalized"|"mid"|"attn"|"mlp"|"branches", "cosine", ...}."""
    out: list[CaptureFault] = []
    lag = scores.lag[p].tolist()
    # the shifts scored are -MAX_SHIFT..MAX_SHIFT (identify_run.Scores), read off the rows rather
    # than imported: the sample view imports this module at start-up, and identify_run brings the
    # file reading in with it
    center = (len(lag[0]) - 1) // 2
    for col in range(layers + 2):
        for j, value in enumerate(lag[col]):
            s = j - center
            c = _f(value)
            if s and c is not None:
                out.append({"kind": "lag", "cosine": c, "shift": s,
                            "boundary": "post" if col == layers + 1 else col})
    for kind, table in scores.inner.items():
        for i, value in enumerate(table[p].tolist()):
            c = _f(value)
            if c is not None:
                out.append({"kind": kind, "cosine": c, "layer": i})
    out.sort(key=lambda c: -c["cosine"])
    return out


def state_name(c: CaptureFault) -> str:
    """A short name of a catalogue state: "b=5 one row late", "layer 4's MLP output"."""
    kind = c["kind"]
    if kind == "lag":
        where = "the final norm's output" if c["boundary"] == "post" else f"b={c['boundary']}"
        return f"{where} {_rows(c['shift'])}"
    if kind == "normalized":
        return f"layer {c['layer']}'s normalized input"
    if kind == "mid":
        return f"layer {c['layer']}'s residual after attention"
    return f"layer {c['layer']}'s {BRANCH_TEXT[kind]}"


def short(c: CaptureFault) -> str:
    """The b column's text for a fault: 5+1 (b = 5, one row late), 4mid, 4mlp, 4att, 4a+m, 4nrm."""
    kind = c["kind"]
    if kind == "lag":
        return f"{c['boundary']}{c['shift']:+d}"
    tag = {"normalized": "nrm", "mid": "mid", "attn": "att", "mlp": "mlp", "branches": "a+m"}[kind]
    return f"{c['layer']}{tag}"


def _rows(s: int) -> str:
    n = "one token" if abs(s) == 1 else f"{abs(s)} tokens"
    return f"{n} late" if s > 0 else f"{n} early"


def explain(label: str, p: int, scores, layers: int, tol: float, *, prefix: str = "slot"
            ) -> tuple[CaptureFault | None, list[Finding]]:
    """(the fault record, findings) for part `p` when a catalogue state is within `tol`; else
    (None, []). `prefix` is "slot" or "final" (the finding codes: slot_lag, final_lag, ...)."""
    ranked = candidates(p, scores, layers)
    if not ranked or 1 - ranked[0]["cosine"] > tol:
        return None, []
    best = ranked[0]
    second = ranked[1] if len(ranked) > 1 else None
    exact = scores.cos[p]
    own = _own_boundary(best, layers)
    own_cos = _f(exact[own]) if own is not None else None
    fault: CaptureFault = {**best, "short": short(best), "distance": 1 - best["cosine"], "tolerance": tol,
             "second": ({"state": state_name(second), "cosine": second["cosine"]} if second else None),
             "margin": (best["cosine"] - second["cosine"]) if second else None}
    numbers = f"cosine {best['cosine']:.4f}"
    if own_cos is not None:
        where = "the final norm's output" if own == layers + 1 else f"b={own}"
        numbers += f"; {where} itself {own_cos:.4f}"
    if second:
        numbers += f"; next best {state_name(second)} {second['cosine']:.4f}"
    code, message = _finding(best, label)
    found = finding(f"{prefix}_{code}", "warning", f"{message} ({numbers})", slot=label,
                    fault={k: v for k, v in fault.items() if k != "second"})
    return fault, [found]


def _own_boundary(c: CaptureFault, layers: int) -> int | None:
    """The column of the boundary the fault's state belongs to (for the numbers shown)."""
    if c["kind"] == "lag":
        b = c["boundary"]
        return b if isinstance(b, int) else layers + 1  # "post": the final norm's output
    if c["kind"] == "normalized":
        return c["layer"]
    return c["layer"] + 1


def _finding(c: CaptureFault, label: str) -> tuple[str, str]:
    kind = c["kind"]
    if kind == "lag":
        s = c["shift"]
        where = "the final norm's output" if c["boundary"] == "post" else f"b={c['boundary']}"
        held = "the previous token's" if s == 1 else "the next token's" if s == -1 else f"token t{-s:+d}'s"
        return "lag", (f"{label} is {where} {_rows(s)}: row t holds {held} state; the capture's rows "
                       "are shifted against the token ids (a slice off by one, or states taken after "
                       "the next token was appended)")
    if kind in BRANCH_TEXT:
        return "no_residual", (
            f"{label} is layer {c['layer']}'s {BRANCH_TEXT[kind]} without the residual (b={c['layer'] + 1} "
            "is that plus the residual): the capture stores the layer's `hidden_states` without adding "
            "`residual` (vLLM and SGLang decoder layers return the two apart; an aux state is "
            "hidden_states + residual)")
    if kind == "normalized":
        return "normalized", (
            f"{label} is layer {c['layer']}'s normalized input (its input_layernorm output), not b={c['layer']}: "
            "the capture takes the state after a fused add-norm kernel's norm instead of the residual it adds")
    return "mid_layer", (
        f"{label} is the residual inside layer {c['layer']}, after attention and before the MLP, not "
        f"b={c['layer'] + 1}: a hook on the wrong module (the post-attention norm's input), or the "
        "`residual` a vLLM/SGLang layer passes on without the MLP's `hidden_states`")


def common_lag(faults: list[CaptureFault | None]) -> int | None:
    """The shift when every part is a lag by the same number of rows (a capture one token late)."""
    shifts = {f.get("shift") if f and f.get("kind") == "lag" else None for f in faults}
    if len(faults) < 2 or len(shifts) != 1:
        return None
    s = shifts.pop()
    return s if s else None


def capture_lag_finding(shift: int, n: int) -> Finding:
    return finding("capture_lag", "warning",
                   f"the whole capture is {_rows(shift)}: all {n} parts match their boundaries "
                   f"shifted by {shift:+d} rows; shift the rows back (or fix the capture's slicing) "
                   "before training or comparing", shift=shift)


def own_boundary(fault: CaptureFault) -> int | str | None:
    """The boundary a fault's state belongs to: the lagged boundary itself, b = i for layer i's
    normalized input, b = i + 1 for a state inside layer i (its output is that plus the rest)."""
    if fault.get("kind") == "lag":
        return fault.get("boundary")
    if fault.get("layer") is None:
        return None
    return fault["layer"] if fault["kind"] == "normalized" else fault["layer"] + 1


def what_is_wrong(fault: CaptureFault) -> str:
    """How a part differs from the boundary it belongs to, in a few words."""
    kind = fault.get("kind")
    if kind == "lag":
        return _rows(fault["shift"])
    if kind in BRANCH_TEXT:
        return f"without the residual (layer {fault['layer']}'s {BRANCH_TEXT[kind]} alone)"
    if kind == "normalized":
        return f"normalized (layer {fault['layer']}'s input_layernorm output)"
    return f"taken inside layer {fault['layer']} (after attention, before the MLP)"


def fault_words(fault: CaptureFault) -> str:
    """"b=6 without the residual (layer 5's MLP output alone)": the boundary and what is wrong."""
    own = own_boundary(fault)
    where = "the final norm's output" if own == "post" else f"b={own}"
    return f"{where} {what_is_wrong(fault)}"
