"""Issue 44, item 10: ambiguous inputs get a word. A one-token capture meets every sample that
starts with the same token: `pair` says they tie and that nothing tells them apart (it listed a tie
of 24 at 1.000 as a ranking, under "1 tokens")."""

from __future__ import annotations

import json
from pathlib import Path

from eagle3_tui.cli import main


def one_token_capture(demo: Path, folder: Path) -> Path:
    """The demo's correctly wired capture of data_0.ckpt cut to its first token."""
    import torch

    d = torch.load(demo / "infer" / "ok_bf16_s0.pt", weights_only=True)
    t = d["input_ids"].shape[-1]
    cut = {}
    for key, v in d.items():
        if isinstance(v, torch.Tensor) and t in v.shape:
            dim = list(v.shape).index(t)
            v = v.narrow(dim, 0, 1).clone()
        cut[key] = v
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(cut, folder / "one_token.pt")
    return folder / "one_token.pt"


def test_pair_of_a_one_token_capture_says_the_samples_tie(demo, tmp_path, capsys):
    capture = one_token_capture(demo, tmp_path)
    assert main(["pair", str(capture), str(demo / "train"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert result["capture_tokens"] == 1 and result["tie"] >= 5
    assert main(["pair", str(capture), str(demo / "train")]) == 0
    out = capsys.readouterr().out
    assert ": 1 token, paired by" in out
    assert f"  {result['tie']} samples tie for first at score 1.000 (the capture holds 1 token: nothing tells them apart" in out


def test_accept_on_a_capture_whose_ids_are_all_one_token_says_the_score_means_nothing(demo, tmp_path, capsys):
    from tests.pair.test_blank_ids import blank_capture

    capture = blank_capture(demo, tmp_path, 7)
    assert main(["accept", str(capture), "--drafter", str(demo / "drafter"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    notes = [n for n in result["notes"] if n.startswith("its 102 token ids are all 7: ")]
    assert len(notes) == 1 and "says nothing about the hidden states" in notes[0], result["notes"]
    assert main(["accept", str(capture), "--drafter", str(demo / "drafter")]) == 0
    assert "  note: its 102 token ids are all 7: the drafter is fed that one token" in capsys.readouterr().out
    # the training sample it came from is no such case
    assert main(["accept", str(demo / "train" / "rows_0-2000" / "data_0.ckpt"), "--drafter", str(demo / "drafter"),
                 "--json"]) == 0
    assert not any("token ids are all" in n for n in json.loads(capsys.readouterr().out)["notes"])
