"""Summary numbers equal a direct torch computation; padding and NaN/Inf are reported."""

from __future__ import annotations

import json
import math
import sys

import pytest
import torch

from eagle3_tui.engines.read import stats
from eagle3_tui.engines.read.stats import summarize_file
from tests.helpers import warm_cli
from tests.helpers.sample_files import make_tensors


def _direct(x: torch.Tensor, valid: int) -> dict:
    x = x.float()
    norms = x.norm(dim=-1)
    v = x[:valid].double()
    return {
        "norms": norms.tolist(),
        "norm_mean": float(norms[:valid].mean()),
        "norm_min": float(norms[:valid].min()),
        "norm_max": float(norms[:valid].max()),
        "mean": float(v.mean()),
        "std": float(v.std(unbiased=False)),
        "min": float(v.min()),
        "max": float(v.max()),
        "absmax": float(v.abs().max()),
    }


@pytest.mark.parametrize("chunk", [stats.CHUNK_ELEMENTS, 16 * 5])  # one chunk, and many uneven ones
def test_numbers_equal_direct_torch(files, monkeypatch, chunk):
    monkeypatch.setattr(stats, "CHUNK_ELEMENTS", chunk)
    paths, (_, _, aux, final) = files
    r = summarize_file(str(paths["specforge"]), k=4)
    valid = r["valid_tokens"]
    assert valid == len(aux[0]) - 2
    for got, ref in zip([*r["slots"], r["final"]], [*aux, final]):
        want = _direct(ref, valid)
        assert got["norms"] == pytest.approx(want["norms"], rel=1e-5)
        for key in ("norm_mean", "norm_min", "norm_max", "mean", "std", "min", "max", "absmax"):
            assert got[key] == pytest.approx(want[key], rel=1e-4, abs=1e-6), key
        assert got["first"] == ref[:, :4].tolist()
        assert got["nan"] == got["inf"] == 0


def test_bf16_norms_accumulate_in_float32(files):
    paths, (_, _, aux, _) = files
    r = summarize_file(str(paths["speculators"]))
    want = aux[0].bfloat16().float().norm(dim=-1)
    assert r["slots"][0]["norms"] == pytest.approx(want.tolist(), rel=1e-5)
    assert r["dtype"] == "bfloat16"


def test_padding_detected_and_nonzero_pad_rows_warned(files):
    paths, _ = files
    r = summarize_file(str(paths["specforge"]))
    assert r["padding"] == {"trailing": 2, "nonzero_hidden": True}
    assert r["loss_mask"] == {"ones": r["tokens"] - 3 - 2, "total": r["tokens"]}
    assert any("padding rows" in w for w in r["warnings"])


def test_zero_padding_rows_not_warned(tmp_path):
    ids, mask, aux, final = make_tensors(pad=3)
    aux = [a.clone() for a in aux]
    for a in aux:
        a[-3:] = 0
    final = final.clone()
    final[-3:] = 0
    p = tmp_path / "zeros.ckpt"
    torch.save({"input_ids": ids, "loss_mask": mask, "hidden_state": final, "aux_hidden_state": torch.cat(aux, -1)}, p)
    r = summarize_file(str(p))
    assert r["padding"] == {"trailing": 3, "nonzero_hidden": False}
    assert not any("padding" in w for w in r["warnings"])


def test_nan_and_inf_counted_with_first_row_and_json_stays_valid(tmp_path):
    ids, mask, aux, final = make_tensors()
    x = torch.cat(aux, -1)
    h = aux[0].shape[1]
    x[5, 1] = float("nan")
    x[7, 2] = float("nan")
    x[9, h + 3] = float("inf")  # slot 1
    p = tmp_path / "nan.pt"
    torch.save({"input_ids": ids, "loss_mask": mask, "aux_hidden_state": x, "hidden_state": final}, p)

    out = warm_cli.run(
        [sys.executable, "-m", "eagle3_tui", "summary", "--json", str(p)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON output"))
    s0, s1 = r["slots"][0], r["slots"][1]
    assert (s0["nan"], s0["inf"], s0["first_nonfinite_row"]) == (2, 0, 5)
    assert (s1["nan"], s1["inf"], s1["first_nonfinite_row"]) == (0, 1, 9)
    assert s0["norms"][5] is None and s0["norms"][4] is not None
    # stats of the finite values are still given
    finite = aux[0][torch.isfinite(x[:, :h])].double()
    assert s0["mean"] == pytest.approx(float(finite.mean()), rel=1e-5)
    assert any("aux0: 2 NaN" in w for w in r["warnings"])


def test_all_nan_slot_gives_nulls_not_crash(tmp_path):
    p = tmp_path / "allnan.pt"
    torch.save(torch.full((4, 6), float("nan")), p)
    r = summarize_file(str(p))
    assert r["slots"][0]["nan"] == 8
    assert r["slots"][0]["mean"] is None and r["slots"][0]["norm_mean"] is None


def test_cancel_stops_between_chunks(files, monkeypatch):
    import threading

    monkeypatch.setattr(stats, "CHUNK_ELEMENTS", 16)
    paths, _ = files
    from eagle3_tui.engines.read.load import load_sample

    ev = threading.Event()
    ev.set()
    with pytest.raises(stats.Cancelled):
        stats.summarize(load_sample(str(paths["specforge"])), cancel=ev)


def test_human_output_has_one_row_per_slot(files):
    paths, _ = files
    out = warm_cli.run(
        [sys.executable, "-m", "eagle3_tui", "summary", str(paths["specforge"])],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert "schema SpecForge offline" in lines[1] and "valid 10, 2 padding" in lines[1]
    rows = [l.split()[0] for l in lines[3:] if l.startswith("  ") and not l.strip().startswith(("warning", "assumed"))]
    assert rows == ["aux0", "aux1", "aux2", "final"]
    assert "post-norm" in lines[6]


def test_std_matches_with_an_offset():
    """Variance from sums keeps its precision when the mean is of the order of the spread."""
    x = torch.randn(64, 32) * 0.5 + 1.0
    from eagle3_tui.engines.read.sample import Sample, Slot

    r = stats.summarize(Sample(path="x", schema="t", slots=[Slot(x, "aux0")]))
    assert r["slots"][0]["std"] == pytest.approx(float(x.double().std(unbiased=False)), rel=1e-3)
    assert math.isfinite(r["slots"][0]["mean"])


def test_padding_with_loss_mask_one_is_warned(tmp_path):
    ids, mask, aux, final = make_tensors(pad=4)
    mask = mask.clone()
    mask[-4:] = 1  # the capture took the pad rows for real tokens
    p = tmp_path / "padmask.pt"
    torch.save({"input_ids": ids, "loss_mask": mask, "aux_hidden_state": torch.cat(aux, -1)}, p)
    r = summarize_file(str(p))
    assert r["padding"]["trailing"] == 0
    assert "the last 4 rows have id 0 but loss mask 1: padding taken for real tokens?" in r["warnings"]
