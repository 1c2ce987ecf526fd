"""The final states (after the last layer, before or after the final norm): pre- against
post-norm by the formats (expected, said as info), the same state scaled (scale_mismatch), one
side taken after a norm (norm_mismatch), or another layer's or prompt's (slot_mismatch).

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

from eagle3_tui.engines.compare.measures import Measures
from eagle3_tui.engines.compare.norm import norm_pattern
from eagle3_tui.engines.compare.rounding import factor_text, num
from eagle3_tui.engines.compare.sides import FindingList, Sides
from eagle3_tui.engines.compare.thresholds import MATCH_COS, UNRELATED_COS


def judge_final(sides: Sides, findings: FindingList, m: Measures) -> None:
    """The final states' pair, when both sides have one (m.final)."""
    fin = m.final
    cos_mean = fin.get("cos_mean") if fin else None
    if not fin or cos_mean is None:
        return
    la, lb = m.final_labels or (sides.a.final_norm, sides.b.final_norm)
    if la in ("pre", "post") and lb in ("pre", "post") and la != lb:
        findings.add("norm_mismatch", "info",
                     f"final: A is {la}-norm and B {lb}-norm by their formats (cosine {fin['cos_mean']:.3f}); "
                     "expected, the final states are not compared as equals", slot="final", expected=True)
        return
    if cos_mean >= MATCH_COS:
        factor = m.constant_factor(len(sides.b_parts) - 1, len(sides.a_parts) - 1)
        if factor is not None:
            findings.add("scale_mismatch", "warning",
                         f"final: B = {factor_text(factor)} x A (same direction, constant per-token norm ratio)",
                         factor=num(factor), slots=["final"], factors=[num(factor)])
        return
    norm = norm_pattern(sides, m, fin, len(sides.a_parts) - 1, len(sides.b_parts) - 1)
    if norm is not None:
        findings.add("norm_mismatch", "warning", f"final: {norm['message']}", slot="final", **norm["details"])
    elif cos_mean >= UNRELATED_COS:
        findings.add("slot_mismatch", "error",
                     f"final: mean cosine {fin['cos_mean']:.3f} (same state gives > {MATCH_COS}): "
                     "the final states come from different layers",
                     slots=[{"slot": "final", "nearest": "final", "cosine": fin["cos_mean"]}])
    else:  # never silent: a final state this far from A's is not A's, whatever it is
        ratio, within = fin.get("norm_ratio_median"), fin.get("within_bf16_tol")
        findings.add("slot_mismatch", "error",
                     f"final: mean cosine {fin['cos_mean']:.3f} (same state gives > {MATCH_COS})"
                     + (f", B/A norm {ratio:,.3g}" if ratio is not None else "")
                     + (f", {100 * within:.1f}% of values within bf16" if within is not None else "")
                     + ", and no per-channel norm maps one onto the other: B's final state is another layer's "
                     "or another prompt's, not A's",
                     slots=[{"slot": "final", "nearest": "final", "cosine": fin["cos_mean"]}])
