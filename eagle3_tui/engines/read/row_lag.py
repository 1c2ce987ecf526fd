"""How B's rows line up with A's by the hidden states alone: the mean cosine of the two at each lag
(B row t against A row t + lag). Compare's alignment runs it when the token ids cannot line the
rows up (engines/compare/align.py); `accept --ids-from` runs it to lend an id-less capture its
training sample's ids (borrow_ids.py). Its limits are compare's thresholds (engines/compare/
thresholds.py names them with the noise they were measured against); they are declared here,
below both users.

torch (imported when used) and the standard library only: shipped to the box with the engines.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

#: hidden-state alignment tries B row t against A row t + lag for lag in [-MAX_LAG, MAX_LAG]
MAX_LAG = 8
#: rows sampled for the lag search
LAG_ROWS = 128
#: median cosine below which nothing is related (other prompt: <= 0.22; one layer off: >= 0.61)
UNRELATED_COS = 0.35
#: the lag search centres its rows (centred_units) when at least this many are sampled
CENTRE_ROWS = 8


def lag_scores(a_slots: Sequence[Any], b_slots: Sequence[Any], a_valid: int, b_valid: int, offset: int,
               end: int, lags: Iterable[int]) -> dict[int, float | None]:
    """Per lag: mean over B slots of the best mean centred cosine against any A slot, B row t vs A
    row t + offset + lag, on up to LAG_ROWS rows spread over the usable range (B rows before
    `end`, both sides' valid rows). None for a lag with no usable row. Centred: each side's mean
    unit row is taken out first (centred_units), so that the direction a real model's rows share
    does not make every lag look alike."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    lags = list(lags)
    lo = max(0, -(offset + min(lags)), 1 if end > 2 else 0)  # row 0 (the sink) says little
    hi = min(end, b_valid, a_valid - offset - max(lags))
    if hi <= lo:
        return {lag: None for lag in lags}
    n = hi - lo
    idx = torch.linspace(lo, hi - 1, min(n, LAG_ROWS)).round().long().unique()
    bsub = centred_units(torch.stack([s.tensor[idx].float() for s in b_slots], dim=1))  # [m, kb, H]
    out: dict[int, float | None] = {}
    for lag in lags:
        asub = centred_units(torch.stack([s.tensor[idx + offset + lag].float() for s in a_slots], dim=1))
        cos = torch.bmm(bsub, asub.transpose(1, 2))  # [m, kb, ka]
        mean = torch.nanmean(cos, dim=0)  # rows with NaN/Inf drop out
        best = mean.nan_to_num(-1.0).amax(dim=1).mean().item()
        out[lag] = None if math.isnan(best) else best
    return out


def best_lag(scores: dict[int, float | None]) -> int | None:
    """The lag with the highest score; the smallest |lag| among equals."""
    known = [lag for lag, v in scores.items() if v is not None]
    return max(known, key=lambda lag: (scores[lag], -abs(lag)), default=None)


def centred_units(x):
    """Rows [m, parts, H] as unit vectors after taking out their part's mean unit row: what is
    left is what tells one token from another. A real model's rows share a common direction
    (Gemma 3 270M's middle layers: cosine ~0.96 between rows far apart, SmolLM2 ~0.5), so raw
    cosines rank a lag, another prompt and the right rows alike. The mean of unit rows, not of the
    rows: a massive activation (one row 100x the others) does not set it. With fewer than
    CENTRE_ROWS rows the mean is the rows themselves: they are left as they are (unit)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    u = unit(x, norm)
    # a unit row is finite and not zero exactly when its row's norm is (NaN and Inf spread into
    # the norm, an overflowing norm gives a zero row): no pass over the rows for it
    finite = torch.isfinite(norm) & (norm > 0)
    if int(finite.all(1).sum()) < CENTRE_ROWS:
        return u
    count = finite.sum(0, keepdim=True).clamp(min=1)
    if bool(finite.all()):  # the usual case: the same values without the masks' passes
        return unit(u - u.sum(0, keepdim=True) / count)
    mean = torch.where(finite, u, 0).sum(0, keepdim=True) / count
    return torch.where(finite, unit(u - mean), u)


def unit(x, norm=None):
    """Rows over their norms (`norm`: those norms, when the caller has them already)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if norm is None:
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    return x / norm.clamp(min=1e-30)
