"""Safe loading on every local path a pickle can take: zip (mmap), gzip, the legacy non-zip torch
format, a raw pickle, a name torch cannot open itself, and safetensors metadata. Each is refused
with its one line, in the library, `summary` and `compare`, and the payload never runs."""

from __future__ import annotations

import json
import sys

import pytest

from eagle3_tui.engines.read.load import load_sample, read_object
from eagle3_tui.engines.read.sample import SampleError
from tests.helpers import warm_cli
from tests.helpers.evil_files import write_evil_files, write_safetensors_with_pickle_metadata


@pytest.fixture
def evil(tmp_path):
    marker = tmp_path / "MARKER"
    files = write_evil_files(tmp_path / "evil", marker)
    return tmp_path / "evil", files, marker


def test_the_payload_is_real(tmp_path):
    # the unsafe loader runs it: without this, "no marker" would prove nothing
    import torch

    marker = tmp_path / "MARKER"
    write_evil_files(tmp_path / "evil", marker)
    torch.load(tmp_path / "evil" / "legacy.pt", weights_only=False)
    assert marker.exists()


def test_every_path_refuses_in_the_library(evil):
    folder, files, marker = evil
    for name, words in files.items():
        with pytest.raises(SampleError) as err:
            load_sample(str(folder / name))
        assert words in str(err.value), (name, str(err.value))
    assert not marker.exists(), "a refused file ran its payload"


def test_summary_and_compare_refuse_with_one_line(evil):
    folder, files, marker = evil
    names = list(files)
    out = warm_cli.run(
        [sys.executable, "-m", "eagle3_tui", "summary", "--json", *(str(folder / n) for n in names)],
        capture_output=True, text=True,
    )
    assert out.returncode == 1 and "Traceback" not in out.stdout + out.stderr
    results = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["path"] for r in results] == [str(folder / n) for n in names]
    for name, result in zip(names, results):
        assert files[name] in result["error"], (name, result)
    for name in ("legacy.ckpt.gz", "raw.pt"):
        out = warm_cli.run(
            [sys.executable, "-m", "eagle3_tui", "compare", str(folder / name), str(folder / "zip.ckpt.gz")],
            capture_output=True, text=True,
        )
        assert out.returncode != 0 and "Traceback" not in out.stdout + out.stderr
        assert "refused: the file asks to run Python code (posix.system)" in out.stdout + out.stderr
    assert not marker.exists(), "a refused file ran its payload"


def test_safetensors_metadata_is_only_ever_text(tmp_path):
    marker = tmp_path / "MARKER"
    path = tmp_path / "hs_0.safetensors"
    text = write_safetensors_with_pickle_metadata(path, marker)
    tensors, metadata = read_object(str(path))
    assert metadata == {"payload": text} and isinstance(metadata["payload"], str)
    sample = load_sample(str(path))
    assert sample.schema == "speculators" and len(sample.slots) == 3
    assert not marker.exists()
