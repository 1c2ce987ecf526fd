"""Whether a file's final state is before or after the final norm, when only the format says so.

A format's word (SpecForge and EAGLE write the final norm's output, speculators the residual before
it, ModelOpt either under the same keys) is the producer's convention, not a fact of the file: a
capture written in SpecForge's layout by other code may hold the residual. The numbers can contradict
it: the final norm's output is small next to the residual stream, the residual at L at least as large
as the deepest captured slot. Measured (median row norm of the final over the largest slot's median):

  SmolLM2-135M (b 2, 15, 27): after the norm 0.085..0.093, before it 1.22..1.28;
  Gemma 3 270M (b 2, 9, 15):  after the norm 0.006,        before it 2.56.

(after the norm against b 2 alone: 0.70 on SmolLM2, 0.10 on Gemma 3). A label the numbers contradict
becomes "?" with the reason, never the other word: a guess that is not sure says so.

Plain Python: the summary, the scan and compare each pass the norms they already have.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: final / largest slot median row norm above which "post" is contradicted (post <= 0.093, pre >= 1.22)
POST_MAX_RATIO = 0.5
#: ... below which "pre" is contradicted
PRE_MIN_RATIO = 0.2
#: rows a median needs before it says anything
MIN_ROWS = 4
UNKNOWN = "?"


def _median(values: Sequence[float | None]) -> float | None:
    xs = sorted(v for v in values if v is not None and math.isfinite(v))
    if len(xs) < MIN_ROWS:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def checked_label(label: str | None, final_norms: Sequence[float | None],
                  slot_norms: Sequence[Sequence[float | None]]) -> tuple[str | None, str | None]:
    """(the label to show, why it became "?" or None). `final_norms` and each of `slot_norms` are
    per-row L2 norms of the same (valid) rows."""
    if label not in ("pre", "post") or not slot_norms:
        return label, None
    final = _median(final_norms)
    slots = [m for m in (_median(s) for s in slot_norms) if m is not None and m > 0]
    if final is None or not slots:
        return label, None
    ratio = final / max(slots)
    word = "after" if label == "post" else "before"
    if label == "post" and ratio > POST_MAX_RATIO:
        seen = f"{ratio:.2f}x the largest slot's (a residual's size; the norm's output is <= 0.1x on real models)"
    elif label == "pre" and ratio < PRE_MIN_RATIO:
        seen = f"{ratio:.3f}x the largest slot's (the norm's output's size; the residual at L is >= 1x)"
    else:
        return label, None
    shown = f"{final:,.0f}" if final >= 100 else f"{final:.3g}"
    return UNKNOWN, (f"final: the format stores it {word} the final norm, but its median row norm "
                     f"{shown} is {seen}: before or after the norm is not known")
