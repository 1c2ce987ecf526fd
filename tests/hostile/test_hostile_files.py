"""Hostile files through `summary`, `summary --json` and `compare`: one line naming the problem
each, never a traceback, never a hang, and memory bounded (peak measured in a child process)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from eagle3_tui.cli import main
from tests.helpers import warm_cli
from tests.hostile import files as F

LOADABLE = F.SAFETENSORS + F.TORCH  # quick to refuse; gzip bombs and special files have own tests
GIB = 1024**3


def _build(d, builders):
    out = []
    for build in builders:
        path = d / f"{build.__name__}.pt"
        out.append((build.__name__, str(path), build(path)))
    return out


def _cli(*args, timeout=120):
    return warm_cli.run([sys.executable, "-m", "eagle3_tui", *args], text=True, timeout=timeout)


def _good(d):
    path = d / "good.pt"
    torch.save({"input_ids": torch.arange(1, 9), "aux_hidden_state": torch.randn(1, 8, 12)}, path)
    return str(path)


def test_summary_json_gives_one_line_with_path_and_error_per_file(tmp_path):
    built = _build(tmp_path, LOADABLE + F.SPECIAL)
    out = _cli("summary", "--json", *(p for _, p, _ in built))
    assert out.returncode == 1
    assert "Traceback" not in out.stderr and out.stderr == ""
    lines = out.stdout.splitlines()
    assert len(lines) == len(built), out.stdout
    for (name, path, words), line in zip(built, lines):
        record = json.loads(line)
        assert set(record) == {"path", "error", "computed", "runtime"}, (name, record)
        assert record["path"] == path
        assert words in record["error"], (name, record["error"])
        assert "not a torch, safetensors or gzip file" not in record["error"], name


def test_summary_table_names_each_failure_on_stderr(tmp_path):
    built = _build(tmp_path, LOADABLE + F.SPECIAL)
    out = _cli("summary", *(p for _, p, _ in built))
    assert out.returncode == 1
    assert out.stdout.splitlines() == [f"{p}: failed (message on stderr)" for _, p, _ in built]
    errors = out.stderr.splitlines()
    assert len(errors) == len(built) and "Traceback" not in out.stderr
    for (name, path, words), line in zip(built, errors):
        assert line.startswith(f"eagle3-tui summary: {path}: error: ") and words in line, (name, line)


def test_compare_names_the_hostile_side(tmp_path, capsys):
    good = _good(tmp_path)
    for name, path, words in _build(tmp_path, LOADABLE):
        for args in (["compare", "--json", good, path], ["compare", good, path]):
            assert main(args) == 2, name
            captured = capsys.readouterr()
            assert "Traceback" not in captured.err
            if "--json" in args:
                record = json.loads(captured.out)
                assert record["b"]["path"] == path and words in record["b"]["error"], (name, record)
            else:
                assert captured.out.strip() == f"B  {path}: error: {record['b']['error']}"


@pytest.mark.parametrize("build", F.SPECIAL, ids=lambda b: b.__name__)
def test_fifo_and_device_are_named_not_opened(tmp_path, build):
    """A FIFO named like a sample used to block forever: the timeout turns a hang into a failure."""
    path = tmp_path / "data_0.pt"
    words = build(path)
    good = _good(tmp_path)
    out = _cli("summary", "--json", str(path), timeout=60)
    assert json.loads(out.stdout)["error"].startswith(f"a {words}" if words == "FIFO" else "a character device")
    out = _cli("compare", str(path), good, timeout=60)
    assert out.returncode == 2 and words in out.stdout and "Traceback" not in out.stderr
    if words == "device":
        assert "behind a symbolic link" in out.stdout and "empty file" not in out.stdout


_PEAK = """
import sys
from eagle3_tui.cli import main
rc = main(sys.argv[1:])
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print("PEAK", peak * 1024, rc, file=sys.stderr)
"""


def _peak(*args) -> tuple[int, subprocess.CompletedProcess]:
    out = subprocess.run([sys.executable, "-c", _PEAK, *args], capture_output=True, text=True, timeout=300)
    last = out.stderr.strip().splitlines()[-1].split()
    assert last[0] == "PEAK", out.stderr
    return int(last[1]), out


@pytest.mark.parametrize("build", [F.gz_bomb, F.gz_zeros, F.pt_stride0], ids=lambda b: b.__name__)
def test_memory_stays_bounded(tmp_path, build):
    path = tmp_path / "data_0.ckpt.gz"
    words = build(path)
    peak, out = _peak("summary", "--json", str(path))
    record = json.loads(out.stdout)
    assert words in record["error"]
    assert peak < 1.5 * GIB, f"{build.__name__}: peak {peak / GIB:.2f} GiB"
    assert len(out.stdout) < 1000
    if build is F.gz_zeros:  # the first bytes show it: nothing like the whole file is expanded
        assert peak < 0.1 * GIB, peak
    if build is F.pt_stride0:
        peak, out = _peak("compare", _good(tmp_path), str(path))
        assert words in out.stdout and peak < 1.5 * GIB, peak


def test_million_token_json_line_is_bounded(tmp_path):
    path = tmp_path / "long.pt"
    torch.save({"input_ids": torch.arange(1, 1_000_001), "hidden_states": torch.ones(1_000_000, 2)}, path)
    out = _cli("summary", "--json", "--slots", "1", str(path))
    record = json.loads(out.stdout)
    assert record["tokens"] == 1_000_000 and record["listed_tokens"] < 1_000_000
    assert len(record["slots"][0]["norms"]) == len(record["ids"]) == record["listed_tokens"]
    assert record["slots"][0]["norm_mean"] == pytest.approx(2**0.5)  # over every token
    assert any("list the first" in w for w in record["warnings"])
    assert len(out.stdout) < 40_000_000


def test_float64_near_its_limit_is_not_reported_as_inf(tmp_path):
    x = torch.randn(64, 32, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    path = tmp_path / "huge.pt"
    torch.save({"input_ids": torch.arange(1, 65), "aux_hidden_state": (x * 1e300).repeat(1, 3)}, path)
    out = _cli("summary", "--json", str(path))
    slot = json.loads(out.stdout)["slots"][0]
    assert slot["norm_mean"] == pytest.approx(float(x.norm(dim=-1).mean()) * 1e300, rel=1e-9)
    assert slot["std"] == pytest.approx(float(x.std(unbiased=False)) * 1e300, rel=1e-9)
    assert slot["mean"] == pytest.approx(float(x.mean()) * 1e300, rel=1e-9)
    assert slot["first"][0][0] == pytest.approx(float(x[0, 0]) * 1e300)
    assert slot["inf"] == 0 and None not in slot["norms"]
