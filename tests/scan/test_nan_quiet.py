"""A scan of samples whose rows are NaN (signalling NaNs too, the bits that set the CPU's invalid
flag in the BLAS dot products) or Inf against -Inf says so in its findings and nowhere else:
numpy's "RuntimeWarning: invalid value encountered in matmul" (engines/scan/rows_pass.py _norms_dots)
reached stderr. Run as a user runs it, in a subprocess; the counts are those the scan gave before."""

from __future__ import annotations

import json
import sys

import pytest
import torch

from tests.helpers import warm_cli
from tests.helpers.processes import subprocess_env
from tests.helpers.ssh import write_sample

#: float32 bits of a signalling NaN: any arithmetic on it raises the invalid flag
SIGNALLING_NAN = 0x7F810000


def _quiet_nan(x: torch.Tensor) -> torch.Tensor:
    return torch.full_like(x, float("nan"))


def _signalling_nan(x: torch.Tensor) -> torch.Tensor:
    return torch.full_like(x, 0.0).view(torch.int32).fill_(SIGNALLING_NAN).view(torch.float32)


def _inf_and_minus_inf(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[..., 0::2], y[..., 1::2] = float("inf"), -float("inf")  # inf * inf + (-inf) * (-inf) ... and inf - inf
    y[..., 1, :] = 0.0  # and inf * 0 against the next part's row
    return y


FILLS = {"data_1.ckpt": _quiet_nan, "data_2.ckpt": _signalling_nan, "data_3.ckpt": _inf_and_minus_inf}


@pytest.fixture(scope="module", params=[(24, 32), (600, 256)], ids=["24 rows", "600 rows"])
def dataset(request, tmp_path_factory):
    """data_0 clean; data_1..3 filled (every state of every row) as FILLS says. 24 rows: read whole
    in one pass; 600 rows: a quick scan picks rows, a full one reads them all."""
    t, h = request.param
    root = tmp_path_factory.mktemp("nan-data")
    expected = {}
    for i, name in enumerate(["data_0.ckpt", *FILLS]):
        write_sample(root / name, seed=i, t=t, h=h)
        if name in FILLS:
            sample = torch.load(root / name)
            for key in ("aux_hidden_state", "hidden_state"):
                sample[key] = FILLS[name](sample[key])
            torch.save(sample, root / name)
            nan = sum(int(torch.isnan(sample[k]).sum()) for k in ("aux_hidden_state", "hidden_state"))
            inf = sum(int(torch.isinf(sample[k]).sum()) for k in ("aux_hidden_state", "hidden_state"))
            expected[name] = (nan, inf)
    return root, expected


def _scan(*args: str) -> tuple[str, str]:
    p = warm_cli.run([sys.executable, "-m", "eagle3_tui", "scan", *args, "--no-cache"], text=True,
                     env=subprocess_env(), timeout=120)
    assert p.returncode in (0, 1), p.stderr[-2000:]
    assert "RuntimeWarning" not in p.stderr and "invalid value" not in p.stderr, p.stderr[-2000:]
    assert "Warning" not in p.stderr, p.stderr[-2000:]
    return p.stdout, p.stderr


def test_a_full_scan_counts_every_nan_and_inf_and_warns_of_nothing(dataset):
    root, expected = dataset
    out, _ = _scan(str(root), "--full", "--json")
    *records, last = [json.loads(line) for line in out.splitlines()]
    (counts,) = [f["counts"] for f in last["findings"] if f["code"] == "nonfinite"]
    assert {c["path"]: (c["nan"], c["inf"]) for c in counts} == expected
    by_path = {r["path"]: r for r in records}
    assert all(s["nan"] == 0 and s["inf"] == 0 for s in by_path["data_0.ckpt"]["slots"])
    for name in FILLS:
        assert by_path[name]["slots"][0]["first_nonfinite_row"] == 0
    for name in ("data_1.ckpt", "data_2.ckpt"):
        assert by_path[name]["slots"][0]["norm_mean"] is None  # no finite row to average
    assert by_path["data_3.ckpt"]["slots"][0]["norm_mean"] == 0.0  # the zero row, the only finite one
    out, _ = _scan(str(root), "--full")
    assert "ERROR   nonfinite: 3 files hold NaN/Inf hidden states" in out, out[:2000]


def test_a_quick_scan_names_the_same_files_and_warns_of_nothing(dataset):
    root, expected = dataset
    for extra in ([], ["--json"]):
        out, _ = _scan(str(root), *extra)
        text = out if not extra else json.dumps([json.loads(line) for line in out.splitlines()][-1])
        for name in expected:
            assert name in text, (extra, text[:2000])
        assert "data_0.ckpt (" not in text  # the clean file is not among them
