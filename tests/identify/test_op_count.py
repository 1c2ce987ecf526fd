"""identify's own work next to the model's forward, counted in torch operations (issue 32,
identify_t512). Each operation on a CPU tensor is a parallel region that waits for every
thread; on a busy machine a few thousand of them cost more than their arithmetic. Counting
them is what the benchmark's wall time cannot do reliably on a shared machine."""

from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile

from eagle3_tui.engines.model.identify import identify, load_model
from eagle3_tui.engines.read.load import load_sample


def _aten_ops(fn) -> int:
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return sum(e.count for e in prof.key_averages() if e.key.startswith("aten::"))


def test_identify_adds_few_operations_to_the_forward(world):
    path = str(world.specforge("ops.ckpt"))
    sample = load_sample(path)
    lm = load_model(str(world.model), "cpu")[0]
    ids = torch.as_tensor(sample.ids[: sample.valid_len]).reshape(1, -1)

    def forward():
        with torch.inference_mode():
            lm.get_decoder()(input_ids=ids, use_cache=False)

    forward(), identify(sample, str(world.model), device="cpu")  # warm
    bare = _aten_ops(forward)
    ours = _aten_ops(lambda: identify(sample, str(world.model), device="cpu"))
    # the shifts, the in-layer catalogue and the cosines ride the same forward; before, a
    # search, gather and mean per shift and a norm, product and mean per in-layer state made
    # identify 7.7x the plain forward's operations here (12,523 vs 1,624; now 2.5x)
    assert ours < 3.0 * bare, (ours, bare)
