"""A B slot that passes the absolute bar (mean cosine >= MATCH_COS with its own A slot) but
differs from it far more than the pair's other slots differ from theirs: a nearby state (inside
the layer, or a neighbouring layer), told by the noise of its siblings (slot_mismatch).

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from eagle3_tui.engines.compare.measures import Measures
from eagle3_tui.engines.compare.rounding import num
from eagle3_tui.engines.compare.sides import FindingList, Sides
from eagle3_tui.engines.compare.thresholds import MATCH_COS, NOISE_FLOOR, NOISE_RATIO
from eagle3_tui.engines.results.compare import PairMetrics

if TYPE_CHECKING:
    import torch


def noisy_slots(sides: Sides, m: Measures, best_a: torch.Tensor, best_cos: torch.Tensor) -> dict[int, Noisy]:
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

    same = [j for j in range(min(sides.ka, sides.kb))
            if int(best_a[j]) == j and float(best_cos[j]) >= MATCH_COS]
    if len(same) < 2:
        return {}
    noise: dict[int, float] = {}
    for j in same:
        c = m.cos[:, j, j][m.real]
        c = c[torch.isfinite(c)]
        if c.numel():
            noise[j] = float((1.0 - c).clamp(min=0).median())
    out: dict[int, Noisy] = {}
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


def report_noisy(findings: FindingList, noisy: dict[int, Noisy], slots: list[PairMetrics]) -> None:
    """One slot_mismatch for the noisy slots, with the siblings' numbers that show it."""
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
    findings.add("slot_mismatch", "error",
                 "; ".join(t for _, t, _ in listed) +
                 f": the same state differs only by the engine's numerics, as the other slot(s) of this pair do: "
                 f"B's slot {'s' if len(listed) > 1 else ''}{', '.join(str(j) for j, _, _ in listed)} "
                 "hold(s) a nearby state, not A's (inside the layer, e.g. after attention and before the MLP, "
                 "or a neighbouring layer of a model whose layers change the residual stream little)",
                 slots=[{"slot": j, "nearest": j, "cosine": num(slots[j]["cos_mean"]),
                         "noise": num(noisy[j]["noise"]), "noise_ratio": num(r)} for j, _, r in listed],
                 told_by="noise of the other slots")


class Noisy(TypedDict):
    noise: float  # the slot's median 1 - cosine over its rows
    siblings: dict[int, float]  # the other matched slots' own
