"""The thresholds in compare.py sit between measured bf16 noise and the faults, on fresh seeds:
bounded from both sides (test_threshold_sides.py pins each side with a near-threshold case)."""

from __future__ import annotations

import random

import torch

from eagle3_tui.engines import compare as C
from eagle3_tui.engines.compare.norm import norm_fit
from eagle3_tui.demo.prompt import toy_prompt as _make_prompt
from eagle3_tui.demo.model import build_model


def _cos(a, b):
    return torch.nn.functional.cosine_similarity(a.float(), b.float(), dim=-1)


def test_noise_and_faults_fall_on_their_sides_of_the_thresholds():
    for seed in (3, 4):
        model = build_model(seed=seed)
        rng = random.Random(seed)
        p, q = _make_prompt(rng, 1000), _make_prompt(rng, 1000)
        s32, f32 = model.boundaries(torch.tensor(p.ids))
        s16, f16 = model.boundaries(torch.tensor(p.ids), torch.bfloat16)
        other, _ = model.boundaries(torch.tensor(q.ids))
        n = min(len(p.ids), len(q.ids))
        for b in range(1, len(s32)):
            noise = _cos(s32[b], s16[b])
            ratio = s16[b].float().norm(dim=-1) / s32[b].norm(dim=-1)
            assert noise.mean() > 1 - (1 - C.MATCH_COS) / 5  # 5x margin on the mean
            assert abs(ratio.median() - 1) < C.SCALE_TOL / 5
            assert ratio.std() / ratio.mean() < C.RATIO_CV / 3
            if b < len(s32) - 1:
                assert _cos(s32[b], s32[b + 1]).mean() < C.MATCH_COS - 0.05  # a layer off is not noise
                # ... nor another prompt: upper bound on UNRELATED_COS
                assert _cos(s32[b], s32[b + 1]).median() > C.UNRELATED_COS + 0.1
            assert _cos(s32[b][:n], other[b][:n]).median() < C.UNRELATED_COS
        # upper bounds: the fault sides stay beyond the thresholds
        pre_post = f32.norm(dim=-1) / s32[-1].norm(dim=-1)
        assert pre_post.std() / pre_post.mean() > C.RATIO_CV * 2  # before vs after the norm
        assert abs(0.95 - 1) > C.SCALE_TOL * 2 and abs(1.05 - 1) > C.SCALE_TOL * 2  # 5 % scales are named
        res_true, _ = norm_fit(f32, s16[-1])
        res_off, _ = norm_fit(f32, s32[-2])
        assert res_true < C.NORM_FIT_RESIDUAL / 2 < C.NORM_FIT_RESIDUAL * 2 < res_off
