"""Naming the mismatch from the numbers: which B slot holds which A slot (a reordering, a
layer shift, other layers), a scale, a norm on one side only, unrelated states, zero states,
a width that differs, NaN/Inf, padding taken as tokens. Each finding has a code, a severity and
a message with the numbers that prove it (README: finding codes).

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, TypedDict

from eagle3_tui.engines.compare.identified import IdentifiedSides
from eagle3_tui.engines.compare.measures import Measures
from eagle3_tui.engines.compare.nonfinite import check_nonfinite
from eagle3_tui.engines.compare.norm import norm_pattern
from eagle3_tui.engines.compare.rounding import factor_text, num
from eagle3_tui.engines.compare.sides import FindingList, Sides
from eagle3_tui.engines.compare.thresholds import (
    MATCH_COS,
    NOISE_FLOOR,
    NOISE_RATIO,
    SHIFT_GAIN,
    UNRELATED_COS,
    UNRELATED_GAIN,
)
from eagle3_tui.engines.read.sample import Sample
from eagle3_tui.engines.results.compare import AlignmentInfo, PairMetrics

if TYPE_CHECKING:
    import torch


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
        if self.check_zero_states(m):
            return  # no direction to compare: every cosine of that side is undefined
        if not ka or not kb:
            self.judge_final(m)
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
            self.judge_final(m)
            return
        mismatched: list[SlotMiss] = []
        mapping: list[int | None] = []
        scaled: list[tuple[int, float]] = []
        normed = False
        noisy = self.noisy_slots(m, best_a, best_cos)
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
        self.judge_layers(slot_matrix, mapping, mismatched, normed)
        if noisy:
            self.report_noisy(noisy, m.slots)
        if scaled:
            factors = [f for _, f in scaled]
            med = sorted(factors)[len(factors) // 2]
            self.add("scale_mismatch", "warning",
                     f"B = {factor_text(med)} x A in slot(s) {', '.join(str(j) for j, _ in scaled)}: same direction "
                     f"(cosine >= {MATCH_COS}), constant per-token norm ratio", factor=num(med),
                     slots=[j for j, _ in scaled], factors=[num(f) for f in factors])
        self.judge_final(m)

    def noisy_slots(self, m: Measures, best_a: torch.Tensor, best_cos: torch.Tensor) -> dict[int, _Noisy]:
        """B slots that pass the absolute bar (mean cosine >= MATCH_COS with their own A slot) but
        whose per-token error is far beyond the other slots' of the same pair: what "equal up to
        this engine's numerics" looks like is what the siblings show. The error of a row is 1 - its
        cosine (scale-free), a slot's the median over its rows (massive rows do not set it); a slot
        is off when it is at least NOISE_RATIO times its noisiest matched sibling's and above
        NOISE_FLOOR. On a model whose residual stream is large next to one sub-layer's update
        (Gemma 3: the state after attention and before the MLP has mean cosine 0.994 with the
        boundary), MATCH_COS alone passed a whole missing MLP."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        same = [j for j in range(min(self.sides.ka, self.sides.kb))
                if int(best_a[j]) == j and float(best_cos[j]) >= MATCH_COS]
        if len(same) < 2:
            return {}
        noise: dict[int, float] = {}
        for j in same:
            c = m.cos[:, j, j][m.real]
            c = c[torch.isfinite(c)]
            if c.numel():
                noise[j] = float((1.0 - c).clamp(min=0).median())
        out: dict[int, _Noisy] = {}
        for j, nj in noise.items():
            others = {i: v for i, v in noise.items() if i != j}
            if not others:
                continue
            ref = max(others.values())
            if nj >= NOISE_FLOOR and nj >= NOISE_RATIO * ref:
                out[j] = {"noise": nj, "siblings": others}
        if len(out) == len(noise):  # every slot off alike: no sibling shows the noise (MATCH_COS decides)
            return {}
        return out

    def report_noisy(self, noisy: dict[int, _Noisy], slots: list[PairMetrics]) -> None:
        listed = []
        for j, d in sorted(noisy.items()):
            m, sib = slots[j], [slots[i] for i in sorted(d["siblings"])]
            ratio = d["noise"] / max(max(d["siblings"].values()), 1e-12)
            rels = [v for s in sib if (v := s.get("rel_l2_err")) is not None]
            within = [v for s in sib if (v := s.get("within_bf16_tol")) is not None]
            m_rel, m_within = m.get("rel_l2_err"), m.get("within_bf16_tol")
            text = (f"B{j}~A{j} mean cosine {m['cos_mean']:.4f}, but its rows differ "
                    + (f"{ratio:,.0f}x" if ratio < 1e6 else "far")
                    + f" more than the other slots' (median 1 - cosine {d['noise']:.2g} vs "
                    f"<= {max(d['siblings'].values()):.2g}")
            if rels and m_rel is not None:
                text += f"; relative L2 error {m_rel:.3f} vs {min(rels):.3f}..{max(rels):.3f}"
            if within and m_within is not None:
                text += (f"; {100 * m_within:.1f}% of values within bf16 vs "
                         f"{100 * min(within):.0f}..{100 * max(within):.0f}%")
            listed.append((j, text + ")", ratio))
        self.add("slot_mismatch", "error",
                 "; ".join(t for _, t, _ in listed) +
                 f": the same state differs only by the engine's numerics, as the other slot(s) of this pair do: "
                 f"B's slot {'s' if len(listed) > 1 else ''}{', '.join(str(j) for j, _, _ in listed)} "
                 "hold(s) a nearby state, not A's (inside the layer, e.g. after attention and before the MLP, "
                 "or a neighbouring layer of a model whose layers change the residual stream little)",
                 slots=[{"slot": j, "nearest": j, "cosine": num(slots[j]["cos_mean"]),
                         "noise": num(noisy[j]["noise"]), "noise_ratio": num(r)} for j, _, r in listed],
                 told_by="noise of the other slots")

    def check_zero_states(self, m: Measures) -> bool:
        """Parts that are exactly zero on compared rows: a capture that holds no states (a hook
        that never fired, a buffer never filled). Returns True when a whole side is zero, so that
        nothing else is judged from its undefined cosines."""
        zero = m.zero_rows
        n = int(m.real.sum())
        if not n:
            return False
        notes, details, whole_side = [], {}, False
        b0, _b1, off = m.span
        for side, sample in (("a", self.sides.a), ("b", self.sides.b)):
            labels = [s.label for s in sample.slots] + (["final"] if self.sides.both_final else [])
            counts = zero[side].sum(0).tolist()
            whole = [labels[p] for p, c in enumerate(counts) if c == n]
            some = {labels[p]: c for p, c in enumerate(counts) if 0 < c < n}
            if not whole and not some:
                continue
            tag = side.upper()
            start = b0 + (off if side == "a" else 0)
            first = start + int(zero[side].any(1).nonzero()[0, 0])
            details[side] = {"all_zero": whole, "zero_rows": some, "first_row": first}
            if whole:
                notes.append(f"{tag}'s {', '.join(whole)} {'is' if len(whole) == 1 else 'are'} zero on every "
                             f"compared row ({n}): no states were written there (a capture hook that never fired, "
                             "a buffer never filled?)")
            if some:
                notes.append(f"{tag}'s " + ", ".join(f"{lab} is zero on {c} of {n} rows" for lab, c in some.items())
                             + f" (first {tag} row {first}): those rows hold no states and are left out")
            slot_labels = labels[:len(sample.slots)]
            whole_side |= bool(slot_labels) and all(lab in whole for lab in slot_labels)
        if notes:
            self.add("zero_states", "error", "; ".join(notes) + "; cosines with a zero vector are undefined",
                     **details)
        return whole_side

    def judge_layers(self, matrix: torch.Tensor, mapping: list[int | None], mismatched: list[SlotMiss],
                     normed: bool) -> None:
        """Name what the slot -> slot matches say: a reordering, a layer shift, or other layers.

        mapping[j] is the A slot B slot j holds (mean cosine >= MATCH_COS) or None; `mismatched`
        lists the B slots that hold no A slot. A shift (every B slot a boundary off, ids read
        under the other convention) keeps the slots ascending: some B slots may land exactly on a
        neighbouring A slot (B_j = A_{j-1} when B is shallower), all at one constant offset."""
        kb = len(mapping)
        matched = {j: i for j, i in enumerate(mapping) if i is not None}
        moved = {j: i for j, i in matched.items() if i != j}
        ascending = all(i1 < i2 for (_, i1), (_, i2) in zip(sorted(matched.items()), sorted(matched.items())[1:]))
        offsets = {i - j for j, i in matched.items()}
        text = ", ".join(f"B{j}=A{m}" if m is not None else f"B{j}=?" for j, m in enumerate(mapping))
        if len(matched) == kb and moved and len(set(matched.values())) == kb and not ascending:
            self.add("slot_permutation", "error",
                     f"B's slots are A's in another order: {text} (mean cosine >= {MATCH_COS}){self.identified.said_exactly()}; "
                     "concatenated in list order instead of ascending layer order?", mapping=mapping,
                     **self.identified.details())
            return
        shifted = bool(moved) and len(offsets) == 1 and not normed and len(matched) + len(mismatched) == kb
        if moved and not shifted:
            if not ascending:  # a reordering with other faults besides
                self.add("slot_permutation", "error",
                         f"B's slots are A's in another order: {text} (mean cosine >= {MATCH_COS}){self.identified.said_exactly()}; "
                         "concatenated in list order instead of ascending layer order?", mapping=mapping,
                         **self.identified.details())
            else:  # ascending, but not at one offset (e.g. two B slots hold the same A slot)
                mismatched = sorted(mismatched + [
                    {"slot": j, "nearest": i, "cosine": num(matrix[j, i]), "holds": i} for j, i in moved.items()
                ], key=lambda m: m["slot"])
        if shifted:
            d = offsets.pop()
            listed = sorted(mismatched + [
                {"slot": j, "nearest": i, "cosine": num(matrix[j, i]), "holds": i} for j, i in moved.items()
            ], key=lambda m: m["slot"])
            direction = "shallower" if d < 0 else "deeper"
            shift: LayerShift = {"direction": direction, "slots": d, "boundaries": self.boundary_shift(d),
                                 "told_by": "exact matches"}
            holds = ", ".join(f"B{j} = A{i} ({matrix[j, i]:.3f})" for j, i in sorted(moved.items()))
            rest = ", ".join(f"B{m['slot']}~A{m['nearest']} {m['cosine']:.3f}" for m in mismatched)
            exact = self.identified.said_exactly()
            self.add("slot_mismatch", "error",
                     f"{len(listed)} of {kb} B slots are not at their A position: every B slot sits {direction} "
                     f"than A's, {holds} exactly" + (f", {rest} match nothing" if rest else "") +
                     " (ascending, not reordered)" +
                     (exact or ": one boundary off: layer ids read under the other convention"),
                     slots=listed, shift=shift, mapping=mapping, **self.identified.details())
            return
        if not mismatched:
            return
        parts = ", ".join(f"B{m['slot']}~A{m['nearest']} {m['cosine']:.3f}" for m in mismatched)
        details: MismatchDetails = {"slots": mismatched}
        tail = "captured at other layers, e.g. layer ids read under the other convention"
        if len(mismatched) == kb and not matched:
            adjacent = _shift_direction(matrix)
            if adjacent is not None:
                details["shift"] = {"direction": adjacent, "slots": None, "boundaries": self.boundary_shift(None),
                                    "told_by": "adjacent-slot cosines"}
                tail = (f"every B slot sits {adjacent} than A's (the adjacent-slot cosines say so): a layer "
                        "shift, likely one boundary off: layer ids read under the other convention")
        exact = self.identified.said_exactly()
        if exact:
            tail = tail.split(", e.g.")[0].split(": a layer shift")[0] + exact
        self.add("slot_mismatch", "error",
                 f"{len(mismatched)} of {kb} B slots match no A slot (best mean cosine {parts}; "
                 f"the same layer gives > {MATCH_COS}): {tail}", **details, **self.identified.details())

    def boundary_shift(self, d: int | None) -> int | None:
        """B's boundary minus A's, when the files label their slots (or the target model
        identified them) and it is one number."""
        a_b = [s.boundary for s in self.sides.a.slots]
        b_b = [s.boundary for s in self.sides.b.slots]
        got = self.identified.boundaries()
        if got is not None and (None in a_b or None in b_b):
            a_b, b_b = got
        known_a, known_b = _known(a_b), _known(b_b)
        if known_a is not None and known_b is not None:
            diffs = {y - x for x, y in zip(known_a, known_b)}
            return diffs.pop() if len(diffs) == 1 else None
        if d is not None and known_a is not None:  # B_j holds A_{j+d}: its boundary is A_{j+d}'s
            diffs = {known_a[j + d] - known_a[j] for j in range(len(known_a)) if 0 <= j + d < len(known_a)}
            return diffs.pop() if len(diffs) == 1 else None
        return None

    def judge_final(self, m: Measures) -> None:
        fin = m.final
        cos_mean = fin.get("cos_mean") if fin else None
        if not fin or cos_mean is None:
            return
        la, lb = m.final_labels or (self.sides.a.final_norm, self.sides.b.final_norm)
        if la in ("pre", "post") and lb in ("pre", "post") and la != lb:
            self.add("norm_mismatch", "info",
                     f"final: A is {la}-norm and B {lb}-norm by their formats (cosine {fin['cos_mean']:.3f}); "
                     "expected, the final states are not compared as equals", slot="final", expected=True)
            return
        if cos_mean >= MATCH_COS:
            factor = m.constant_factor(len(self.sides.b_parts) - 1, len(self.sides.a_parts) - 1)
            if factor is not None:
                self.add("scale_mismatch", "warning",
                         f"final: B = {factor_text(factor)} x A (same direction, constant per-token norm ratio)",
                         factor=num(factor), slots=["final"], factors=[num(factor)])
            return
        norm = norm_pattern(self.sides, m, fin, len(self.sides.a_parts) - 1, len(self.sides.b_parts) - 1)
        if norm is not None:
            self.add("norm_mismatch", "warning", f"final: {norm['message']}", slot="final", **norm["details"])
        elif cos_mean >= UNRELATED_COS:
            self.add("slot_mismatch", "error",
                     f"final: mean cosine {fin['cos_mean']:.3f} (same state gives > {MATCH_COS}): "
                     "the final states come from different layers",
                     slots=[{"slot": "final", "nearest": "final", "cosine": fin["cos_mean"]}])
        else:  # never silent: a final state this far from A's is not A's, whatever it is
            ratio, within = fin.get("norm_ratio_median"), fin.get("within_bf16_tol")
            self.add("slot_mismatch", "error",
                     f"final: mean cosine {fin['cos_mean']:.3f} (same state gives > {MATCH_COS})"
                     + (f", B/A norm {ratio:,.3g}" if ratio is not None else "")
                     + (f", {100 * within:.1f}% of values within bf16" if within is not None else "")
                     + ", and no per-channel norm maps one onto the other: B's final state is another layer's "
                     "or another prompt's, not A's",
                     slots=[{"slot": "final", "nearest": "final", "cosine": fin["cos_mean"]}])

    def check_nonfinite(self, m: Measures | None) -> None:
        """NaN/Inf anywhere in either side (nonfinite.py); `m`: the main pass's squared row norms (None: not measured)."""
        check_nonfinite(self.sides, self.findings, m)

    def check_padding_flags(self, pad_rows: int) -> None:
        """`pad_rows`: B rows on A's padding, as the alignment found them and the main pass kept them."""
        notes: list[str] = []
        details: PaddingDetails = {}
        if pad_rows:
            notes.append(f"B's last {pad_rows} aligned rows fall on A's padding (A has {self.sides.a_valid} valid of "
                         f"{self.sides.a.tokens} rows): padding taken as real tokens; only A's valid rows were compared")
            details["rows"] = pad_rows
        for side, s in (("A", self.sides.a), ("B", self.sides.b)):
            bad = _mask_on_padding(s)
            if bad:
                notes.append(f"{side}'s loss_mask is 1 on {bad} trailing rows with id 0 (padding)")
                if side == "A":
                    details["a_loss_mask_on_padding"] = bad
                else:
                    details["b_loss_mask_on_padding"] = bad
        if notes:
            self.add("padding", "warning", "; ".join(notes), **details)


class _Noisy(TypedDict):
    noise: float  # the slot's median 1 - cosine over its rows
    siblings: dict[int, float]  # the other matched slots' own


class SlotMiss(TypedDict, total=False):
    """A B slot at no A position (slot_mismatch's "slots"): the A slot nearest it, and the one it
    holds exactly when it is A's at another position."""

    slot: int
    nearest: int
    cosine: float | None
    holds: int


class LayerShift(TypedDict):
    """slot_mismatch's "shift": every B slot a boundary off A's."""

    direction: str  # "deeper" | "shallower"
    slots: int | None  # B slot j holds A slot j + slots (None: told by the adjacent-slot cosines)
    boundaries: int | None  # B's boundary minus A's, when it is one number
    told_by: str  # "exact matches" | "adjacent-slot cosines"


class MismatchDetails(TypedDict, total=False):
    slots: list[SlotMiss]
    shift: LayerShift


class PaddingDetails(TypedDict, total=False):
    rows: int  # B rows on A's padding
    a_loss_mask_on_padding: int
    b_loss_mask_on_padding: int


def _shift_direction(matrix: torch.Tensor) -> str | None:
    """"deeper" / "shallower" when every B slot sits past / before its A slot, read from the
    cross-slot cosines next to the diagonal: a B slot one boundary deeper than A_j is nearer
    A_{j+1} (above the diagonal) than B_{j+1} is to A_j (below it), and the other way round.
    None when the two sides do not differ by SHIFT_GAIN."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    k = min(matrix.shape)
    if k < 2:
        return None
    above = torch.stack([matrix[j, j + 1] for j in range(k - 1)])
    below = torch.stack([matrix[j + 1, j] for j in range(k - 1)])
    gap = float((above - below).nanmean())
    if math.isnan(gap) or abs(gap) < SHIFT_GAIN:
        return None
    return "deeper" if gap > 0 else "shallower"


def _known(boundaries: list[int | None]) -> list[int] | None:
    """The boundaries when every one is known, else None."""
    known = [x for x in boundaries if x is not None]
    return known if len(known) == len(boundaries) else None


def _mask_on_padding(s: Sample) -> int:
    """Trailing rows with id 0 whose loss_mask is 1 (padding that would be trained on)."""
    if s.ids is None or s.loss_mask is None:
        return 0
    ids, mask = s.ids.tolist(), s.loss_mask.tolist()
    count = 0
    for i in range(len(ids) - 1, -1, -1):
        if ids[i] != 0:
            break
        if mask[i]:
            count += 1
    return count if count and count < len(ids) else 0


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
