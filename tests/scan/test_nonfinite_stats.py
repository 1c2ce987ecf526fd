"""A sample with a NaN or an Inf in the rows a scan reads gets the same statistics from the Python
sums (rows.prefix_summary) as from the torch path that read such files before (part_stats and
signature): the bad values left out of every mean, median and maximum, the massive rows found
among the finite ones."""

from __future__ import annotations

import math

import pytest
import torch

from eagle3_tui.engines.scan.rows import part_stats, prefix_summary, signature

VALID, PAD = 12, 2  # rows read: 12 valid (row 0 first), then 2 padding rows


def _norms(seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    norms = 40 + 10 * torch.rand(4, VALID + PAD, generator=g)  # 3 slots and the final state
    norms[:, 0] *= 30  # the first token's massive activation
    norms[:, VALID:] = 0
    return norms


def _cases():
    nan, inf = math.nan, math.inf
    one_row = _norms(1)
    one_row[1, 5] = nan
    a_part = _norms(2)
    a_part[2, :VALID] = nan  # a slot with no finite valid row
    inf_and_nan = _norms(3)
    inf_and_nan[0, 3], inf_and_nan[3, 7] = inf, nan
    in_padding = _norms(4)
    in_padding[1, VALID + 1] = nan
    massive_nan = _norms(5)
    massive_nan[2, 0] = nan  # row 0 massive in the other parts, not finite in this one
    return {"one row": one_row, "a whole part": a_part, "an Inf and a NaN": inf_and_nan, "in the padding": in_padding,
            "on the massive row": massive_nan}


def _cosines(norms: torch.Tensor) -> torch.Tensor:
    cos = 0.9 + 0.01 * torch.arange(norms.shape[1], dtype=torch.float32).repeat(norms.shape[0] - 1, 1)
    return torch.where(torch.isfinite(norms[:-1]) & torch.isfinite(norms[1:]), cos, math.nan)


def _close(a, b, where: str) -> None:
    if a is None or b is None:
        assert a is None and b is None, where
    else:
        assert a == pytest.approx(b, rel=1e-5), where


@pytest.mark.parametrize("case", list(_cases()))
def test_the_python_sums_agree_with_the_torch_path_on_a_file_with_nan(case):
    norms = _cases()[case]
    cos = _cosines(norms)
    valid = 300  # the file's valid rows (rows 0..299): the mean weighs row 0 as 1 in 300
    pick = torch.tensor([*range(0, 2 * VALID, 2)] + [valid, valid + 1])  # row 0 first, then padding
    nan = [int(torch.isnan(r).sum()) for r in norms]
    inf = [int(torch.isinf(r).sum()) for r in norms]
    first = [None] * 4
    stats, sig = prefix_summary(norms, cos, VALID, valid, True, nan, inf, first, 3, True, True)
    want_stats = part_stats(norms, pick, valid, nan, inf, first, True, None)
    want_sig = signature(norms, cos, slice(0, VALID), 3, True, True, False)
    for i, (got, want) in enumerate(zip(stats, want_stats, strict=True)):
        for key in ("norm_mean", "norm_bulk", "norm_max"):
            _close(got[key], want[key], f"{case}: part {i} {key}")
        assert got["_pad_nonzero"] == want["_pad_nonzero"], (case, i)
    assert sig["massive"] == want_sig["massive"], case
    for key in ("rel_final", "cos_next"):
        assert len(sig[key]) == len(want_sig[key]), case
        for i, (a, b) in enumerate(zip(sig[key], want_sig[key], strict=True)):
            _close(a, b, f"{case}: {key}[{i}]")
    _close(sig["cos_final"], want_sig["cos_final"], f"{case}: cos_final")


def test_a_file_with_nan_keeps_its_finite_rows_numbers():
    """What a user reads for the slot with the NaN: the mean and maximum of its finite rows, and
    the massive first row set aside from the bulk."""
    norms = _cases()["one row"]
    stats, sig = prefix_summary(norms, _cosines(norms), VALID, VALID, False, [0, 1, 0, 0], [0] * 4, [None, 5, None, None],
                                3, True, True)
    finite = [v for v in norms[1, :VALID].tolist() if math.isfinite(v)]
    assert stats[1]["norm_mean"] == pytest.approx(sum(finite) / len(finite))
    assert stats[1]["norm_bulk"] == pytest.approx(sum(finite[1:]) / len(finite[1:]))
    assert stats[1]["norm_max"] == pytest.approx(max(finite))
    assert (stats[1]["nan"], stats[1]["first_nonfinite_row"]) == (1, 5)
    assert sig["massive"] == 1 and all(r is not None for r in sig["rel_final"])
