"""How compare writes a number: into the JSON (num: None for NaN/Inf; short: nested lists at 5
significant digits) and into a finding's message (factor_text: a scale factor as a person reads it).

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

import math


def num(x, digits: int | None = None) -> float | None:
    """x as a JSON number; None for NaN, Inf and no value at all."""
    if x is None:
        return None
    v = float(x)
    if math.isnan(v) or math.isinf(v):
        return None
    return round(v, digits) if digits is not None else v


def factor_text(x: float) -> str:
    """A scale factor as a person reads it: 3 significant digits, no trailing zeros ("4", "1.05",
    "0.5"). A factor measured through bf16 noise (4 x A reads 3.9994 on one CPU and 4.0003 on
    another) must print the same everywhere; the exact value stays in the JSON."""
    return f"{x:.3g}"


def short(x, digits: int = 5) -> list:
    """x as nested lists of floats rounded to `digits` significant digits (short JSON);
    NaN/Inf become None. Rounded in float64 so that each value prints as its short decimal."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    x = x.detach().double()
    finite = torch.isfinite(x)
    mag = torch.where(finite & (x != 0), x.abs(), torch.ones_like(x))
    scale = torch.pow(10.0, (digits - 1) - torch.floor(torch.log10(mag)))
    out = torch.where(finite, torch.round(x * scale) / scale, x).tolist()
    if bool(finite.all()):
        return out

    def clean(v):
        if isinstance(v, list):
            return [clean(u) for u in v]
        return None if math.isnan(v) or math.isinf(v) else v

    return clean(out)
