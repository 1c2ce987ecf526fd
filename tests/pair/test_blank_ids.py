"""Issue 34.4: a capture whose token ids are all 0 (padding written for ids) has no ids. Before,
`pair` ranked by states but its header said "paired by token ids", and `compare` lined the zeros
up with A's padding: "nothing was compared". Now both go by hidden states and say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eagle3_tui.cli import main
from tests.helpers.compare_view import SHARD


def blank_capture(demo: Path, folder: Path, value: int = 0) -> Path:
    """The demo's correctly wired capture of data_0.ckpt with every input id set to `value`."""
    import torch

    d = torch.load(demo / "infer" / "ok_bf16_s0.pt", weights_only=True)
    d["input_ids"] = torch.full_like(d["input_ids"], value)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(d, folder / "padded_ids.pt")
    return folder / "padded_ids.pt"


@pytest.mark.parametrize("value", [0, 7])
def test_pair_goes_by_states_and_its_header_says_so(demo, tmp_path, capsys, value):
    capture = blank_capture(demo, tmp_path, value)
    assert main(["pair", str(capture), str(demo / "train")]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "paired by token ids" not in header
    assert f"paired by hidden states (the capture: its 102 token ids are all {value})" in header
    assert main(["pair", str(capture), str(demo / "train"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert result["paired_by"] == "states" and result["capture_ids"] is False
    assert result["matches"][0]["path"] == f"{SHARD.split('/', 1)[1]}/data_0.ckpt"


def test_compare_aligns_by_states_and_compares_every_row(demo, tmp_path, capsys):
    capture = blank_capture(demo, tmp_path)
    assert main(["compare", str(demo / SHARD / "data_0.ckpt"), str(capture), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    codes = {f["code"]: f for f in result["findings"]}
    assert "nothing_compared" not in codes and "padding" not in codes
    assert result["alignment"]["method"] == "hidden" and result["alignment"]["length"] == 102
    assert codes["ids_uninformative"]["severity"] == "info"
    assert "all 0" in codes["ids_uninformative"]["message"]
    assert main(["compare", str(demo / SHARD / "data_0.ckpt"), str(capture)]) == 0
    text = capsys.readouterr().out
    assert "aligned by hidden states" in text and "102 rows compared" in text and "all 0" in text
