"""The Judge names the mismatch from the numbers, each finding with a code, a severity and a
message with the numbers that prove it (README: finding codes). Here: what the sides' shapes say
(a width that differs, nothing compared), states of another prompt (unrelated_sample), and the
slot-by-slot verdict on the main pass's Measures: each B slot is its A slot, a scaled copy of one
(scale_mismatch), A's through a norm (norm.py) or none of A's; the rest is judged in the file
named for it: the layers the slots hold (layers.py), a slot noisier than its siblings
(slot_noise.py), zero states (zero_states.py), the final states (final.py), NaN/Inf
(nonfinite.py), padding taken as tokens (padding.py).

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

from eagle3_tui.engines.compare.final import judge_final
from eagle3_tui.engines.compare.identified import IdentifiedSides
from eagle3_tui.engines.compare.layers import SlotMiss, judge_layers
from eagle3_tui.engines.compare.measures import Measures
from eagle3_tui.engines.compare.nonfinite import check_nonfinite
from eagle3_tui.engines.compare.norm import norm_pattern
from eagle3_tui.engines.compare.padding import check_padding_flags
from eagle3_tui.engines.compare.rounding import factor_text, num
from eagle3_tui.engines.compare.sides import FindingList, Sides
from eagle3_tui.engines.compare.slot_noise import noisy_slots, report_noisy
from eagle3_tui.engines.compare.thresholds import MATCH_COS, UNRELATED_COS, UNRELATED_GAIN
from eagle3_tui.engines.compare.zero_states import check_zero_states
from eagle3_tui.engines.results.compare import AlignmentInfo


class Judge:
    """Names the mismatch into `findings`: from the sides alone (width, NaN/Inf, padding), and
    from what the main pass measured (judge: which B slot holds which A slot, scale, norm, ...).
    `identified`: both sides' boundaries from the target model (compare --model), said exactly."""

    def __init__(self, sides: Sides, findings: FindingList, identified: IdentifiedSides):
        self.sides, self.findings, self.identified = sides, findings, identified
        self.add = findings.add

    def check_width(self) -> None:
        a, b = self.sides.a, self.sides.b
        wa, wb = self.sides.ka * a.hidden, self.sides.kb * b.hidden
        if (wa == wb and self.sides.same_h) or (not self.sides.ka and not self.sides.kb):
            return
        details = {"a_width": wa, "b_width": wb, "a_slots": self.sides.ka, "b_slots": self.sides.kb,
                   "a_hidden": a.hidden, "b_hidden": b.hidden}
        if not self.sides.ka or not self.sides.kb:
            missing = "B" if not self.sides.kb else "A"
            self.add("width_mismatch", "error", f"{missing} has no auxiliary slots (only a final state)", **details)
            return
        why = ""
        if self.sides.kb == 1 and b.hidden == a.hidden:
            why = ": auxiliary capture looks disabled (one state of width H instead of k*H)"
        self.add("width_mismatch", "error",
                 f"B has {self.sides.kb} slot(s) of H={b.hidden} (width {wb}), "
                 f"A has {self.sides.ka} of H={a.hidden} (width {wa}){why}", **details)

    def check_nothing_compared(self, alignment: AlignmentInfo) -> None:
        """No row was compared: never a silent pass. Says why, unless a finding already does
        (a width that differs, ids that never line up)."""
        s = self.sides
        if not s.same_h or self.findings.any_error():
            return
        if not s.b_valid:
            why = f"B holds no {'rows' if not s.b.tokens else 'rows but padding'}"
        elif not s.a_valid:
            why = f"A holds no valid rows (all {s.a.tokens} are padding: id 0, loss_mask 0)"
        else:
            why = "no row of B lines up with a valid row of A"
        self.add("nothing_compared", "error", f"nothing was compared: {why}", a_valid=s.a_valid,
                 b_valid=s.b_valid, length=alignment["length"])

    def judge(self, m: Measures, alignment: AlignmentInfo) -> None:
        # lazy: torch: loaded when used, never at start-up
        import torch

        ka, kb = self.sides.ka, self.sides.kb
        if check_zero_states(self.sides, self.findings, m):
            return  # no direction to compare: every cosine of that side is undefined
        if not ka or not kb:
            judge_final(self.sides, self.findings, m)
            return
        slot_matrix = m.matrix[:kb, :ka]
        best_cos, best_a = slot_matrix.nan_to_num(-1.0).max(dim=1)
        # the median over tokens: prompts that share a system prompt agree on those first rows
        cos = m.cos[:, :kb, :ka][m.real]
        medians = torch.nanmedian(cos, dim=0).values if cos.shape[0] else slot_matrix
        top = float(medians.nan_to_num(-1.0).max())
        floor = _lag_floor(alignment)
        if top < UNRELATED_COS or (floor is not None and top < MATCH_COS and floor[0] - floor[1] < UNRELATED_GAIN):
            agree = torch.isfinite(cos).all(-1).all(-1) & (cos.diagonal(dim1=1, dim2=2) >= MATCH_COS).all(-1)
            lead = int(agree.long().cumprod(0).sum()) if agree.numel() else 0
            shared = f"; only the first {lead} rows agree (a shared prefix)" if lead else ""
            self.add("unrelated_sample", "error",
                     f"the highest median cosine between any B slot and any A slot is {top:.3f} (mean "
                     f"{float(best_cos.max()):.3f}; the same prompt gives > {MATCH_COS}){shared}"
                     + (f"; B's rows line up with A's at no lag (best {floor[0]:.3f}) better than with rows 2+ "
                        f"apart ({floor[1]:.3f}, the model's common direction)"
                        if floor is not None and top >= UNRELATED_COS else "")
                     + ": these are the hidden states of another prompt",
                     best_cosine=num(top), best_mean_cosine=num(best_cos.max()), shared_prefix=lead)
            return
        if kb != ka:  # width_mismatch already said what is wrong; the numbers stay in the matrix
            judge_final(self.sides, self.findings, m)
            return
        mismatched: list[SlotMiss] = []
        mapping: list[int | None] = []
        scaled: list[tuple[int, float]] = []
        normed = False
        noisy = noisy_slots(self.sides, m, best_a, best_cos)
        for j in range(kb):
            if bool(torch.isnan(slot_matrix[j]).any()):  # a part with no finite row: nonfinite says so
                mapping.append(None)
                continue
            i, cj = int(best_a[j]), float(best_cos[j])
            if j in noisy:  # near by the absolute bar, far by the pair's own noise: said below
                mapping.append(None)
                continue
            if cj >= MATCH_COS:
                mapping.append(i)
                factor = m.constant_factor(j, i)
                if factor is not None:
                    scaled.append((j, factor))
                continue
            mapping.append(None)
            norm = norm_pattern(self.sides, m, m.slots[j], j, j) if j < ka else None
            if norm is not None:
                normed = True
                self.add("norm_mismatch", "error",
                         f"slot {j}: {norm['message']}", slot=j, **norm["details"])
            else:
                mismatched.append({"slot": j, "nearest": i, "cosine": num(cj)})
        judge_layers(self.sides, self.findings, self.identified, slot_matrix, mapping, mismatched, normed)
        if noisy:
            report_noisy(self.findings, noisy, m.slots)
        if scaled:
            factors = [f for _, f in scaled]
            med = sorted(factors)[len(factors) // 2]
            self.add("scale_mismatch", "warning",
                     f"B = {factor_text(med)} x A in slot(s) {', '.join(str(j) for j, _ in scaled)}: same direction "
                     f"(cosine >= {MATCH_COS}), constant per-token norm ratio", factor=num(med),
                     slots=[j for j, _ in scaled], factors=[num(f) for f in factors])
        judge_final(self.sides, self.findings, m)

    def check_nonfinite(self, m: Measures | None) -> None:
        """NaN/Inf anywhere in either side (nonfinite.py); `m`: the main pass's squared row norms (None: not measured)."""
        check_nonfinite(self.sides, self.findings, m)

    def check_padding_flags(self, pad_rows: int) -> None:
        """Padding taken as tokens (padding.py); `pad_rows`: B rows on A's padding, as the alignment found
        them and the main pass kept them."""
        check_padding_flags(self.sides, self.findings, pad_rows)


def _lag_floor(alignment: AlignmentInfo) -> tuple[float, float] | None:
    """(best lag score, median score at lags 2+ rows away) from the alignment's lag search, or None
    when it did not run. A real model's states share a common direction (other rows of the same
    slot have cosine ~0.5 on SmolLM2), so "unrelated" is "no better at any lag than at a random
    lag", not "cosine near 0"."""
    scores = {int(k): v for k, v in (alignment.get("lag_scores") or {}).items() if v is not None}
    far = sorted(v for k, v in scores.items() if abs(k) >= 2)
    if len(far) < 4 or not scores:
        return None
    return max(scores.values()), far[len(far) // 2]
