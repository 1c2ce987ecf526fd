"""Thresholds, from measured noise. The demo transformer (demo/model.py; seeds 0, 1, 2; 8 demo
prompts each, boundaries 1..L) run in bf16 against float32, same weights:
  - per-slot cosine: mean >= 0.9993, minimum over tokens >= 0.98;
  - per-token norm ratio: median within 1 +- 0.0015, spread (std) <= 0.011;
  - relative L2 error <= 0.035.
The faults sit well away from that noise:
  - a slot one layer off: mean cosine 0.61..0.91 (adjacent boundaries);
  - another prompt's states: median cosine over tokens -0.01..0.22 (the mean reaches 0.31 when
    the prompts share a system prompt); rows shifted by one token: 0.01..0.21;
  - the final state before vs after the norm: cosine 0.93..0.95, per-token ratio spread
    0.17..0.27, and a per-channel gain maps one onto the other (see NORM_FIT_RESIDUAL).
Real engines add other noise (fused kernels, fp8 KV cache), so the margins are wide: "same
part" needs a mean cosine of 0.99 (14x the measured 1 - cosine), "unrelated" is a median below
0.35, a scale is reported beyond 2% (13x the measured drift of the ratio).
"""

from __future__ import annotations

# the hidden-state lag search's own (median cosine below which nothing is related: other prompt
# <= 0.22, one layer off >= 0.61; lags tried; rows sampled): declared below compare, where
# `accept --ids-from` runs the same search (engines/read/row_lag.py)
from eagle3_tui.engines.read.row_lag import CENTRE_ROWS, LAG_ROWS, MAX_LAG, UNRELATED_COS  # noqa: F401 - named here too

#: mean cosine at or above which two parts hold the same states (noise: >= 0.9993)
MATCH_COS = 0.99
#: a slot that passes MATCH_COS is still off when its median per-row 1 - cosine is at least
#: NOISE_RATIO times the noisiest other matched slot's of the same pair, and at least NOISE_FLOOR
#: (measured in docs/compare.md on SmolLM2-135M and Gemma 3 270M)
NOISE_RATIO = 10.0
NOISE_FLOOR = 1e-3
#: B's rows match A's no better at their best lag than at lags 2+ rows away by less than this
#: mean cosine: another prompt's states. A real model (SmolLM2-135M, 6 pairs of real chats x
#: b 2, 15, 27): another prompt's median cosine 0.51..0.65 over a random-row floor of 0.46..0.57
#: (gain <= 0.11), one layer off 0.81..0.98 over 0.27..0.58 (gain >= 0.37)
UNRELATED_GAIN = 0.2
#: |median norm ratio - 1| beyond which a matched pair differs by a scale (noise: <= 0.0015)
SCALE_TOL = 0.02
#: coefficient of variation of the per-token norm ratio above which it is not one constant
#: factor (noise: <= 0.011; before vs after a norm: >= 0.17)
RATIO_CV = 0.05
#: one side is the other passed through a norm when a per-channel gain (RMSNorm, or LayerNorm
#: with bias) fitted by least squares leaves at most this relative L2 residual. Measured on 30
#: prompts x 3 seeds: 0.0003 (float32 both sides), 0.027..0.038 (bf16 vs float32) for the true
#: pre/post pair; 0.40..0.52 for the post-norm state vs boundary L-1, 0.40..0.89 for adjacent
#: boundaries either way round, 0.79..0.96 for another prompt
NORM_FIT_RESIDUAL = 0.15
#: token ids that line up at an offset other than 0 must agree this many in a row: 1 to 3
#: equal ids somewhere else in A (a common token, a template piece) are chance, not B's start
ID_RUN = 4
#: a lag must beat the same position by this much mean cosine to count as a shift
SHIFT_GAIN = 0.1
#: torch.testing's defaults for bfloat16: what "equal up to bf16 rounding" means per element
BF16_RTOL, BF16_ATOL = 1.6e-2, 1e-5
#: float32 elements per chunk of the main pass (all parts of both sides)
CHUNK_ELEMENTS = 1 << 20
#: leading values per token of each compared part that the result carries (the UI's side-by-side)
FIRST_K = 5
