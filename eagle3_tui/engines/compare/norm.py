"""One side is the other passed through a norm (norm_mismatch): the per-token norm ratio varies,
and a per-channel gain fitted by least squares (norm_fit: RMSNorm or LayerNorm) maps the
normalised other side onto it within NORM_FIT_RESIDUAL.

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

import math
from typing import TypedDict

from eagle3_tui.engines.compare.measures import Measures
from eagle3_tui.engines.compare.rounding import num
from eagle3_tui.engines.compare.sides import Sides
from eagle3_tui.engines.compare.thresholds import CHUNK_ELEMENTS, NORM_FIT_RESIDUAL, RATIO_CV
from eagle3_tui.engines.results.compare import PairMetrics


def norm_pattern(sides: Sides, measures: Measures, m: PairMetrics, ia: int, ib: int) -> NormFit | None:
    """One side is the other passed through a norm: the per-token norm ratio varies, and a
    fitted per-channel gain maps the normalised other side onto it (see NORM_FIT_RESIDUAL)."""
    if m.get("cos_mean") is None:
        return None
    ratio_cv = (m["norm_ratio_std"] or 0.0) / max(m["norm_ratio_mean"] or 1e-30, 1e-30)
    if ratio_cv <= RATIO_CV:
        return None
    a_rows, b_rows = measures.aligned_rows(sides.a_parts[ia], sides.b_parts[ib])
    fits = {"a": norm_fit(a_rows, b_rows), "b": norm_fit(b_rows, a_rows)}
    post = min(fits, key=lambda k: fits[k][0])
    residual, kind = fits[post]
    if residual > NORM_FIT_RESIDUAL:
        return None
    flat, other = post.upper(), ("B" if post == "a" else "A")
    return {
        "message": f"{flat} equals {other} passed through {kind} with per-channel gains (residual "
                   f"{100 * residual:.1f}%; cosine {m['cos_mean']:.3f}, per-token norm ratio spread "
                   f"{100 * ratio_cv:.0f}%, norm CV A {m['a_norm_cv']:.3f} / B {m['b_norm_cv']:.3f}): "
                   f"{flat} was taken after a norm, {other} before it",
        "details": {"after_norm": post, "norm_kind": kind, "fit_residual": num(residual),
                    "ratio_cv": num(ratio_cv), "a_norm_cv": m["a_norm_cv"], "b_norm_cv": m["b_norm_cv"]},
    }


def norm_fit(post, pre) -> tuple[float, str]:
    """How well `post` [n, H] is `pre` [n, H] passed through a norm with unknown per-channel gain:
    least squares per channel for y = g * rmsnorm(x) and for y = g * layernorm(x) + bias.
    Returns (relative L2 residual of the better fit, "RMSNorm" | "LayerNorm"). Rows with NaN/Inf
    on either side are skipped; one pass over the rows, in chunks."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    h = pre.shape[1]
    step = max(1, CHUNK_ELEMENTS // (4 * h))
    z = lambda: torch.zeros(h, dtype=torch.float64)  # noqa: E731
    s_yy, s_y, s_yu, s_uu, s_yv, s_vv, s_v = z(), z(), z(), z(), z(), z(), z()
    n = 0
    for r in range(0, pre.shape[0], step):
        x, y = pre[r:r + step].float(), post[r:r + step].float()
        ok = torch.isfinite(x).all(-1) & torch.isfinite(y).all(-1)
        if not bool(ok.all()):
            x, y = x[ok], y[ok]
        if not x.shape[0]:
            continue
        n += x.shape[0]
        u = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True).clamp(min=1e-30))
        xc = x - x.mean(-1, keepdim=True)
        v = xc * torch.rsqrt(xc.pow(2).mean(-1, keepdim=True).clamp(min=1e-30))
        s_yy += y.pow(2).sum(0).double()
        s_y += y.sum(0).double()
        s_yu += (y * u).sum(0).double()
        s_uu += u.pow(2).sum(0).double()
        s_yv += (y * v).sum(0).double()
        s_vv += v.pow(2).sum(0).double()
        s_v += v.sum(0).double()
    total = float(s_yy.sum())
    if n < 2 or total <= 0:
        return float("inf"), "RMSNorm"
    rms_res = float((s_yy - s_yu.pow(2) / s_uu.clamp(min=1e-30)).clamp(min=0).sum())
    # with an intercept per channel: residual = Syy - Sy^2/n - (Syv - Sy Sv/n)^2 / (Svv - Sv^2/n)
    syy_c = s_yy - s_y.pow(2) / n
    syv_c = s_yv - s_y * s_v / n
    svv_c = (s_vv - s_v.pow(2) / n).clamp(min=1e-30)
    ln_res = float((syy_c - syv_c.pow(2) / svv_c).clamp(min=0).sum())
    if rms_res <= ln_res:
        return math.sqrt(rms_res / total), "RMSNorm"
    return math.sqrt(ln_res / total), "LayerNorm"


class NormFitDetails(TypedDict):
    after_norm: str  # "a" | "b": the side taken after the norm
    norm_kind: str
    fit_residual: float | None
    ratio_cv: float | None
    a_norm_cv: float | None
    b_norm_cv: float | None


class NormFit(TypedDict):
    """norm_pattern's answer: the finding's message and its details."""

    message: str
    details: NormFitDetails

