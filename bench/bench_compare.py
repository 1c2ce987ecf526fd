"""Comparing a training sample with an inference capture: T=4096, H=7168, k=3, in memory.

Baseline, measured in the same run on the same tensors: the cross-slot cosine matrix alone, as
one would write it with torch (normalise every slot once, one matmul over all tokens).
Figure: eagle3_tui.engines.compare.compare(a, b), which also aligns, computes every per-slot
metric, per-token cosines and the findings. Target: at most 1.5x the baseline. Best of 3 each,
alternating, so both see the same machine state.
"""

from __future__ import annotations

import time

T, H, K = 4096, 7168, 3


def _samples(dtype):
    import torch

    from eagle3_tui.engines.read.sample import Sample, Slot

    g = torch.Generator().manual_seed(0)
    aux_a = torch.randn(T, K * H, generator=g)
    # a correctly wired capture: the same states plus small kernel noise, in the engine's dtype
    aux_b = (aux_a + 0.01 * torch.randn(T, K * H, generator=g)).to(dtype)
    aux_a = aux_a.to(dtype)
    ids = torch.randint(1, 32000, (T,), generator=g)

    def sample(name, aux):
        slots = [Slot(aux[:, i * H:(i + 1) * H], f"aux{i}") for i in range(K)]
        return Sample(path=name, schema="bench", slots=slots, ids=ids.clone(), loss_mask=torch.ones(T, dtype=torch.int64))

    return sample("a", aux_a), sample("b", aux_b)


def _baseline(a, b):
    import torch

    an = torch.nn.functional.normalize(torch.stack([s.tensor.float() for s in a.slots]), dim=-1)
    bn = torch.nn.functional.normalize(torch.stack([s.tensor.float() for s in b.slots]), dim=-1)
    return (bn.reshape(K, -1) @ an.reshape(K, -1).T) / T  # [kB, kA] mean per-token cosine


def _bench(dtype_name: str) -> dict:
    import torch

    from eagle3_tui.engines.compare import compare

    dtype = getattr(torch, dtype_name)
    a, b = _samples(dtype)
    base_t, ours_t = float("inf"), float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        m = _baseline(a, b)
        base_t = min(base_t, time.perf_counter() - t0)
        t0 = time.perf_counter()
        r = compare(a, b)
        ours_t = min(ours_t, time.perf_counter() - t0)
    assert not [f for f in r["findings"] if f["severity"] != "info"], r["findings"]
    worst = max(abs(r["matrix"][j][i] - float(m[j, i])) for j in range(K) for i in range(K))
    return {
        "figure": ours_t,
        "baseline": base_t,
        "unit": "s",
        "target": "<= 1.5x",
        "details": f"T={T} H={H} k={K} {dtype_name}, {torch.get_num_threads()} threads; matrix agrees with the "
                   f"baseline to {worst:.1e} (the baseline sums T*H products per entry in one float32 matmul)",
    }


BENCHMARKS = {
    "compare_bf16": lambda: _bench("bfloat16"),
    "compare_float32": lambda: _bench("float32"),
}
