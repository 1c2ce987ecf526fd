"""The thresholds of samples/identify.py against the noise they must tolerate, measured again:
bf16 captures of three prompts against the float32 model, every boundary and the post-norm state."""

from __future__ import annotations

import torch

from eagle3_tui.samples.identify import SCALE_TOL, TOLERANCE, UNRELATED_COS, identify
from eagle3_tui.samples.sample import Sample, Slot
from tests.helpers.identify_world import L


def test_noise_sits_inside_the_thresholds_and_neighbours_outside(world):
    true_cos, ratio_dev, neighbour, post_vs_pre, other = [], [], [], [], []
    for i in range(3):
        bounds, post = world.states(i)  # bf16 run
        parts = [Slot(b, f"b{k}") for k, b in enumerate(bounds)]
        r = identify(Sample(path=f"p{i}", schema="list", slots=parts, final=Slot(post, "final"),
                            ids=world.ids(i)), str(world.model))
        m = torch.tensor(r["matrix"], dtype=torch.float64)  # [L+2 parts, L+2 columns]
        assert [s["boundary"] for s in r["slots"]] == list(range(L + 1))
        true_cos += [s["cosine"] for s in r["slots"]] + [r["final"]["cosine"]]
        ratio_dev += [abs(s["norm_ratio"] - 1) for s in r["slots"]]
        neighbour += [float(m[b, b + 1]) for b in range(L)] + [float(m[b + 1, b]) for b in range(L)]
        post_vs_pre += [float(m[L + 1, L]), float(m[L, L + 1])]
        j = (i + 1) % 3
        o_bounds, _ = world.states(j)
        n = min(len(world.ids(i)), len(world.ids(j)))
        foreign = Sample(path="o", schema="list", slots=[Slot(o_bounds[L // 2][:n], "x")], ids=world.ids(i)[:n])
        other.append(identify(foreign, str(world.model))["slots"][0]["cosine"])
    print(f"true >= {min(true_cos):.5f}, |ratio-1| <= {max(ratio_dev):.4f}, neighbours <= {max(neighbour):.3f}, "
          f"post vs pre {min(post_vs_pre):.3f}..{max(post_vs_pre):.3f}, other prompt <= {max(other):.3f}")
    assert 1 - min(true_cos) < TOLERANCE / 2  # the match bound sits well above the noise
    assert max(ratio_dev) < SCALE_TOL / 5
    assert 1 - max(neighbour) > 10 * TOLERANCE and 1 - max(post_vs_pre) > 10 * TOLERANCE
    assert max(other) < UNRELATED_COS
