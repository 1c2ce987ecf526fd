"""Massive activations: the few rows of a real model's residual stream whose norm dwarfs the rest
(the first token, <|im_start|>, often the padding token), which every view and statistic must set
aside instead of letting them set the scale.

Measured on SmolLM2-135M-Instruct (30 layers; 12 real chats of 45..105 tokens, float32): row 0's
norm over the median row norm is 1.1..5.4 at b 0..2, 4.8..10.9 at b 3..9 (where other rows reach
10.2 too), 1.0..1.4 at b 10..11, then 173..191 at b 12, 131..167 at b 15-18, 45..52 at b 27,
37..43 at b 28, 14.6..16.8 at b 29, 7.5..9.5 at b 30; every other row of those chats stays within
1.6x the median from b 11 on. Padding rows (id 0, <|endoftext|>) are massive too. A factor of 20
sits between the largest ordinary row (10.9x, b 3) and the smallest massive one at the middle
layers SpecForge captures (37x, b 28), so it names the same rows on every chat.

Plain Python (lists of floats), so the scan, the views and the reports share one rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: a row is massive when its norm exceeds this many times the median row norm
MASSIVE_FACTOR = 20.0
#: the scale of the other rows reaches this quantile of their norms
ROBUST_QUANTILE = 0.99


def _finite(values: Sequence[float | None]) -> list[float]:
    return sorted(v for v in values if v is not None and math.isfinite(v))


def median_norm(norms: Sequence[float | None], valid: int | None = None) -> float | None:
    """The median of the finite row norms of the first `valid` rows (all rows by default)."""
    finite = _finite(norms[:valid] if valid is not None else norms)
    if not finite:
        return None
    n = len(finite)
    return finite[n // 2] if n % 2 else (finite[n // 2 - 1] + finite[n // 2]) / 2


def massive_rows(norms: Sequence[float | None], valid: int | None = None,
                 factor: float = MASSIVE_FACTOR) -> list[int]:
    """Rows whose norm exceeds `factor` x the median row norm. The median is taken over the first
    `valid` rows (the real tokens; trailing padding may be massive itself), every row is judged."""
    med = median_norm(norms, valid)
    if med is None or med <= 0:
        return []
    limit = factor * med
    return [i for i, v in enumerate(norms) if v is not None and math.isfinite(v) and v > limit]


def robust_top(norms: Sequence[float | None], massive: Sequence[int] = (),
               quantile: float = ROBUST_QUANTILE) -> float | None:
    """The `quantile` of the norms of the rows that are not massive: the top of a scale that the
    massive rows do not set."""
    skip = set(massive)
    finite = _finite([v for i, v in enumerate(norms) if i not in skip])
    if not finite:
        return None
    return finite[min(len(finite) - 1, int(quantile * (len(finite) - 1) + 0.5))]


def massive_note(norms: Sequence[float | None], rows: Sequence[int], valid: int | None = None) -> str:
    """'row 0: massive activation 25,139 (155x the median)', and how many more rows are massive
    ('; 47 more rows, 46 of them padding'); '' when there are none."""
    med = median_norm(norms, valid)
    if not rows or not med:
        return ""
    first = max(rows, key=lambda i: norms[i] or 0.0) if len(rows) > 1 and rows[0] != 0 else rows[0]
    value = float(norms[first] or 0.0)
    text = f"row {first}: massive activation {value:,.0f} ({value / med:,.0f}x the median)"
    more = len(rows) - 1
    if more:
        pad = sum(1 for i in rows if i != first and valid is not None and i >= valid)
        text += f"; {more} more row{'s' if more != 1 else ''}" + (f", {pad} of them padding" if pad else "")
    return text
