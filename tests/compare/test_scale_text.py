"""A scale factor prints as a person reads it (issue 21, item 1): 3 significant digits, so that
a 4x capture measured as 3.9994 on one CPU and 4.0003 on another reads "B = 4 x A" on both."""

from __future__ import annotations

import pytest
import torch

from eagle3_tui.engines.compare import compare
from eagle3_tui.engines.compare.rounding import factor_text

from tests.helpers.compare_world import finding


@pytest.mark.parametrize("measured, shown", [
    (3.9994, "4"), (4.0003, "4"), (3.999, "4"), (1.05, "1.05"), (0.25, "0.25"), (0.5001, "0.5"),
    (12.003, "12"), (1.5, "1.5"),
])
def test_factor_text_rounds_to_three_significant_digits(measured, shown):
    assert factor_text(measured) == shown


@pytest.mark.parametrize("factor, shown", [(3.9994, "4"), (4.0006, "4"), (1.05, "1.05")])
def test_scale_mismatch_names_the_rounded_factor(world, factor, shown):
    b = world.capture(0, dtype=torch.float32, final="post", final_norm="post")
    for s in b.slots + [b.final]:
        s.tensor = s.tensor * factor  # float32: the ratio is `factor` to 1e-7
    r = compare(world.train(0), b)
    slots = [f for f in r["findings"] if f["code"] == "scale_mismatch" and f["slots"] != ["final"]][0]
    assert f"B = {shown} x A in slot(s) 0, 1, 2" in slots["message"]
    assert slots["factor"] == pytest.approx(factor, rel=1e-5)  # the JSON keeps the measured value
    final = [f for f in r["findings"] if f["code"] == "scale_mismatch" and f["slots"] == ["final"]][0]
    assert f"final: B = {shown} x A" in final["message"]
    assert finding(r, "scale_mismatch")["severity"] == "warning"
