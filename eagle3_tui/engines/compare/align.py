"""How B's rows line up with A's: by token ids when both sides have them (with the offset at
which they agree longest, and where they stop agreeing), else by the hidden states themselves
within a lag of MAX_LAG rows, else by position; and the findings that alignment alone can tell
(a token shift, ids that diverge or never line up).

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from eagle3_tui.engines.compare.rounding import num
from eagle3_tui.engines.compare.sides import FindingList, Sides
from eagle3_tui.engines.compare.thresholds import ID_RUN, MATCH_COS, MAX_LAG, SHIFT_GAIN, UNRELATED_COS
from eagle3_tui.engines.read.row_lag import best_lag, lag_scores
from eagle3_tui.engines.results.compare import AlignedIds, AlignmentInfo

if TYPE_CHECKING:
    import torch


class Aligner:
    """Lines B's rows up with A's (align) and says what the alignment alone tells (a token
    shift, ids that diverge) into `findings`."""

    def __init__(self, sides: Sides, findings: FindingList):
        self.sides = sides
        self.add = findings.add

    def align(self) -> AlignmentInfo:
        s = self.sides
        a, b = s.a, s.b
        ids_off: int | None = None
        diverges: int | None = None
        b_valid = s.b_valid
        # ids can only line rows up when both sides hold a real row
        by_ids = a.ids is not None and b.ids is not None and b_valid > 0 and s.a_valid > 0
        if by_ids:
            ids_off, diverges = _align_ids(a.ids, b.ids.reshape(-1)[:b_valid])
        method, offset = ("ids", ids_off) if ids_off is not None else ("position", 0)
        end = diverges if diverges is not None else b_valid
        scores = self.search_lags(offset, end, ids_known=ids_off is not None)
        lag = best_lag(scores) if scores else None
        if scores and lag is not None and (score := scores[lag]) is not None:
            base = scores.get(0) or -1.0
            if ids_off is None and score >= UNRELATED_COS:
                method, offset = "hidden", lag
                if lag:
                    self.report_lag_without_ids(lag, score, base)
            elif ids_off is not None and lag != 0 and score >= max(UNRELATED_COS, base + SHIFT_GAIN):
                method, offset = "hidden", ids_off + lag
                self.add("token_shift", "error",
                         f"B's row t holds A's row t{lag:+d}: mean cosine {score:.4f} at that lag vs "
                         f"{base:.4f} at the same position; hidden rows are shifted against the token ids",
                         offset=lag, cosine=num(score), cosine_same_position=num(base))
        b0 = max(0, -offset)
        b1 = min(b_valid, a.tokens - offset)
        if diverges is not None:
            b1 = min(b1, diverges)
        # rows B holds as real tokens that land on A's padding: shown, never compared
        pad_rows = max(0, min(b1 - b0, b1 + offset - s.a_valid))
        out: AlignmentInfo = {"method": method, "offset": offset, "length": max(0, b1 - b0 - pad_rows),
                              "diverges_at": diverges, "a_start": b0 + offset, "b_start": b0, "b_end": b1,
                              "on_padding": pad_rows}
        if ids_off is not None and offset != ids_off:
            out["ids_offset"] = ids_off
        if scores:
            out["lag_scores"] = {str(k): num(v) for k, v in scores.items()}
        if ids_off is not None and diverges is not None:
            self.report_divergence(ids_off, diverges)
        elif by_ids and ids_off is None:
            self.add("token_divergence", "error",
                     f"token ids differ from the first position (A {int(a.ids.reshape(-1)[0])}, "
                     f"B {int(b.ids.reshape(-1)[0])}) and do not line up at any offset: B is another prompt "
                     "that shares the first 0 tokens (or the sides use different tokenisers)",
                     position=0, shared=0, in_response=False)
        return out

    def report_lag_without_ids(self, lag: int, score: float, base: float) -> None:
        """Without ids on both sides, rows that line up only at a lag mean B's row 0 is not the
        prompt's first token: a truncated or shifted capture, or one that starts later unsaid."""
        a, b = self.sides.a, self.sides.b
        side = "B has" if b.ids is None else "A has" if a.ids is None else "the sides have"
        self.add("token_shift", "warning",
                 f"{side} no token ids, and B's row t lines up with A's row t{lag:+d} (mean cosine {score:.4f} "
                 f"at that lag vs {base:.4f} at the same position): B's first row is not the prompt's first "
                 "token; a capture that really starts later should carry its token ids",
                 offset=lag, cosine=num(score), cosine_same_position=num(base), ids=False)

    def search_lags(self, offset: int, end: int, *, ids_known: bool) -> dict[int, float | None] | None:
        """Similarity per lag in [-MAX_LAG, MAX_LAG], or None when not needed: the ids already
        line the rows up and they agree at lag 0 (the common, cheap case)."""
        s = self.sides
        if not (s.same_h and s.ka and s.kb):
            return None
        if ids_known:
            here = self.lag_scores(offset, end, lags=[0])[0]
            if here is None or here >= MATCH_COS:
                return None
        scores = self.lag_scores(offset, end, lags=range(-MAX_LAG, MAX_LAG + 1))
        # too few rows for a lag search (a short shared prefix): no scores, not a row of Nones
        return scores if any(v is not None for v in scores.values()) else None

    def lag_scores(self, offset: int, end: int, lags: Iterable[int]) -> dict[int, float | None]:
        """Per lag: mean over B slots of the best mean centred cosine against any A slot (read/row_lag.py)."""
        s = self.sides
        return lag_scores(s.a.slots, s.b.slots, s.a_valid, s.b_valid, offset, end, lags)

    def report_divergence(self, ids_off: int, t: int) -> None:
        a, b = self.sides.a, self.sides.b
        a_row = t + ids_off
        in_response = a.loss_mask is not None and 0 <= a_row < len(a.loss_mask) and bool(a.loss_mask[a_row])
        a_id = int(a.ids[a_row]) if 0 <= a_row < len(a.ids) else None
        b_id = int(b.ids[t])
        ctx = {"a_ids": a.ids[max(0, a_row - 3):a_row + 3].tolist(), "b_ids": b.ids[max(0, t - 3):t + 3].tolist()}
        if in_response:
            self.add("token_divergence", "info",
                     f"token ids agree for {_positions(t)}, then B continues with other tokens from position {t} "
                     f"(A {a_id}, B {b_id}) inside A's response: a generated continuation; compared up to there",
                     position=t, shared=t, a_row=a_row, a_id=a_id, b_id=b_id, in_response=True, **ctx)
        else:
            where = "in the prompt (loss_mask 0)" if a.loss_mask is not None else "(A has no loss mask)"
            shift = _realign(a.ids, b.ids, a_row, t)
            if shift is None:
                why = f"and never line up again: B is another prompt that shares the first {t} tokens"
            elif shift == 0:
                why = "then agree again: a token was replaced (chat-template drift?)"
            else:
                what = f"{abs(shift)} token(s) inserted" if shift < 0 else f"{shift} token(s) missing"
                why = f"and line up again after it ({what} in B): chat-template drift?"
            self.add("token_divergence", "error",
                     f"token ids agree for {_positions(t)}, then differ at position {t} {where}: A {a_id}, B {b_id}, "
                     f"{why}; only the first {_positions(t)} {'was' if t == 1 else 'were'} compared",
                     position=t, shared=t, a_row=a_row, a_id=a_id, b_id=b_id, in_response=False,
                     realign_offset=shift, **ctx)

    def aligned_rows_ids(self, al: AlignmentInfo) -> AlignedIds:
        """Token ids of both sides (and A's loss mask) for the aligned B rows b_start..b_end-1."""
        b0, b1, a0 = al["b_start"], al["b_end"], al["a_start"]
        n = max(0, b1 - b0)
        a, b = self.sides.a, self.sides.b

        def cut(t: torch.Tensor | None, start: int) -> list[int] | None:
            return None if t is None else t.reshape(-1)[start:start + n].tolist()

        return {"b_start": b0, "a_start": a0, "count": n, "a_ids": cut(a.ids, a0),
                "b_ids": cut(b.ids, b0), "a_loss_mask": cut(a.loss_mask, a0)}


def _align_ids(a_ids: torch.Tensor, b_ids: torch.Tensor) -> tuple[int | None, int | None]:
    """(offset, first B row where ids differ) with B row t = A row t + offset, or (None, None).

    Offsets tried: |offset| <= MAX_LAG and wherever A holds B's first id (B may start later).
    The offset with the longest run of equal ids from B's first aligned row wins; away from
    offset 0 the run must be at least ID_RUN long (fewer equal ids there are chance).
    """
    a, b = a_ids.reshape(-1).long(), b_ids.reshape(-1).long()
    ta, tb = len(a), len(b)
    cands = set(range(-MAX_LAG, MAX_LAG + 1))
    if tb:
        cands.update((a == b[0]).nonzero().flatten()[:64].tolist())
    best: tuple[int, int, int | None] | None = None  # (run, -|offset|, offset)
    best_div = None
    for o in sorted(cands, key=abs):
        b0, b1 = max(0, -o), min(tb, ta - o)
        if b1 <= b0:
            continue
        diff = (a[b0 + o:b1 + o] != b[b0:b1]).nonzero()
        run = int(diff[0]) if len(diff) else b1 - b0
        key = (run, -abs(o))
        if run and (o == 0 or run >= ID_RUN) and (best is None or key > best[:2]):
            best = (run, -abs(o), o)
            best_div = b0 + run if len(diff) else None
    if best is None:
        return None, None
    return best[2], best_div


def _positions(n: int) -> str:
    return "1 position" if n == 1 else f"{n} positions"


def _realign(a_ids: torch.Tensor, b_ids: torch.Tensor, a_row: int, b_row: int, window: int = 16) -> int | None:
    """After ids diverge at (a_row, b_row): the shift d in [-MAX_LAG, MAX_LAG] after which B and A
    agree again for the next `window` tokens (or all that are left), preferring small |d|; None
    when no shift makes them agree again. B resumes right after |d| inserted tokens (d < 0) or at
    A's token past |d| missing ones (d > 0), or after one replaced token: B[b_row + 1 + i] ==
    A[a_row + 1 + i + d]."""
    for d in sorted(range(-MAX_LAG, MAX_LAG + 1), key=lambda x: (abs(x), x)):
        for bs, as_ in ((b_row + max(0, -d), a_row + max(0, d)), (b_row + 1, a_row + 1 + d)):
            n = min(window, len(b_ids) - bs, len(a_ids) - as_)
            if n < 4 or as_ < 0:
                continue
            if bool((a_ids[as_:as_ + n] == b_ids[bs:bs + n]).all()):
                return d
    return None
