"""Bad files give a one-line error and exit code 1 from `summary`, never a traceback."""

from __future__ import annotations

import gzip
import json
import pickle
import sys

import pytest
import torch

from tests.helpers import warm_cli


class _RunsCode:
    """Unpickling this with the unsafe loader would create the marker file."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _bad_files(d, marker):
    good = d / "good.pt"
    torch.save({"input_ids": torch.arange(8), "aux_hidden_state": torch.randn(8, 12)}, good)
    raw = good.read_bytes()
    files = {
        "empty": (b"", "empty file"),
        "truncated_zip": (raw[: len(raw) // 2], "truncated or corrupt torch file"),
        "random_bytes": (bytes(range(7, 250)) * 10, "not a torch, safetensors or gzip file"),
        "text": (b"hello, this is a text file\n", "not a torch, safetensors or gzip file (starts with text"),
        "legacy_pickle": (pickle.dumps({"a": 1}, protocol=2), "not a torch.save file"),
        "gzip_not_torch": (gzip.compress(b"just some text inside"), "gzip file does not contain a torch file"),
        "truncated_gzip": (gzip.compress(raw)[:200], "gzip"),
    }
    for name, (data, _) in files.items():
        (d / name).write_bytes(data)

    torch.save({"note": "no tensors here", "n": 3}, d / "no_tensors")
    files["no_tensors"] = (None, "holds no tensors")
    torch.save(torch.randn(1, 2, 3, 4), d / "rank4")
    files["rank4"] = (None, "rank 4 is not supported")
    torch.save(torch.randint(0, 5, (6, 9)), d / "int_tensor")
    files["int_tensor"] = (None, "int64 values where hidden states")
    torch.save(torch.randn(0, 12), d / "zero_length")
    files["zero_length"] = (None, "zero-size dimension (shape [0, 12])")
    torch.save({"x": _RunsCode(str(marker))}, d / "runs_code")
    files["runs_code"] = (None, "refused: the file asks to run Python code (io.open)")
    torch.save(torch.randn(4, 10), d / "width_not_divisible")
    files["width_not_divisible"] = (None, "not divisible by the given k = 3")
    torch.save({"input_ids": torch.arange(5), "aux_hidden_state": torch.randn(6, 12)}, d / "ids_length")
    files["ids_length"] = (None, "input_ids has 5 entries but the hidden states have 6 rows")
    return files


def _summary(*args):
    return warm_cli.run([sys.executable, "-m", "eagle3_tui", "summary", *args], capture_output=True, text=True)


def test_every_bad_file_gives_one_line_and_exit_1(tmp_path):
    marker = tmp_path / "PWNED"
    files = _bad_files(tmp_path, marker)
    assert len(files) >= 12
    names = [n for n in files if n != "width_not_divisible"]
    out = _summary(*(str(tmp_path / n) for n in names))  # one process: torch imports once
    assert out.returncode == 1
    assert "Traceback" not in out.stderr + out.stdout
    assert out.stdout.strip().splitlines() == [f"{tmp_path / n}: failed (message on stderr)" for n in names]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == len(names), out.stderr
    for name, line in zip(names, lines):
        assert line.startswith(f"eagle3-tui summary: {tmp_path / name}: error: "), line
        assert files[name][1] in line, (name, line)
    assert not marker.exists(), "unpickling ran code from the file"

    out = _summary("--slots", "3", str(tmp_path / "width_not_divisible"))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip().endswith("error: width 10 is not divisible by the given k = 3")


def test_a_bad_file_alone_exits_1(tmp_path):
    (tmp_path / "empty.pt").write_bytes(b"")
    out = _summary(str(tmp_path / "empty.pt"))
    assert out.returncode == 1 and out.stderr.strip().endswith("error: empty file (0 bytes)")


def test_json_error_lines_and_mixed_exit_code(tmp_path):
    good = tmp_path / "good.pt"
    torch.save(torch.randn(4, 9), good)
    (tmp_path / "empty.pt").write_bytes(b"")
    out = warm_cli.run(
        [sys.executable, "-m", "eagle3_tui", "summary", "--json", str(good), str(tmp_path / "empty.pt")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    first, second = (json.loads(l) for l in out.stdout.splitlines())
    assert first["tokens"] == 4 and "error" not in first
    assert second.pop("runtime")["computed"] == "local"  # which Python and torch read it (issue 32)
    assert second == {"path": str(tmp_path / "empty.pt"), "error": "empty file (0 bytes)", "computed": "local"}


@pytest.mark.parametrize("argv", [["summary"], ["summary", "-k", "-1", "x"], ["summary", "--slots", "two", "x"],
                                  ["summary", "--slots", "0", "x"], ["summary", "--hidden", "-3", "x"]])
def test_usage_errors_exit_2(argv):
    out = warm_cli.run([sys.executable, "-m", "eagle3_tui", *argv], capture_output=True, text=True)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr


def test_missing_file_and_folder(tmp_path):
    out = warm_cli.run(
        [sys.executable, "-m", "eagle3_tui", "summary", str(tmp_path / "nope.pt"), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert out.stderr.splitlines()[0].endswith("error: no such file")
    assert out.stderr.splitlines()[1].endswith("error: is a folder, not a file")


@pytest.mark.parametrize("keep", [0.01, 0.1, 0.5, 0.9, 0.999])
def test_a_copy_cut_off_anywhere_is_named_truncated(tmp_path, keep):
    """An interrupted copy of a SpecForge file: mmap fails before torch reads the archive, with a
    bare 'Invalid argument'; the user must read 'truncated' whatever the cut."""
    from eagle3_tui.engines.read.stats import summarize_file

    good = tmp_path / "good.ckpt"
    torch.save({"input_ids": torch.arange(64), "loss_mask": torch.ones(64, dtype=torch.long),
                "aux_hidden_state": torch.randn(1, 64, 3 * 32), "hidden_state": torch.randn(1, 64, 32)}, good)
    raw = good.read_bytes()
    cut = tmp_path / "data_0.ckpt"
    cut.write_bytes(raw[: max(5, int(len(raw) * keep))])
    result = summarize_file(str(cut))
    assert result["error"] == "truncated or corrupt torch file (zip archive unreadable)"
