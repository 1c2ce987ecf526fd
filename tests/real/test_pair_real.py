"""`eagle3-tui pair` by hidden states on the real model: 16 SpecForge training files (bf16, SDPA,
45..110-token chats that all open with SmolLM2's default system prompt, so their first ~17..25 rows
agree, row 0's massive activation included) and, for each, an inference capture of the same chat
without token ids (bf16, eager attention; a bare [T, 3H] tensor or a list of three [T, H] tensors).
Each capture must pair with its own training sample, clearly ahead of the runner-up."""

from __future__ import annotations

import json

import pytest
import torch

from eagle3_tui.commands import pair as pair_cmd
from tests.helpers.cli import run_command
from tests.helpers.real_smollm2_only import smollm2_only_chats, smollm2_only_target  # noqa: F401 - SmolLM2 only (see there)

N = 16


@pytest.fixture(scope="module")
def real_pairs(tmp_path_factory, real_target, real_chats):
    """(training folder, [(id-less capture, its sample's name)])."""
    root = tmp_path_factory.mktemp("real-pair")
    train, infer = root / "train", root / "infer"
    train.mkdir()
    infer.mkdir()
    aux = list(real_target.cfg.aux_boundaries)
    chats = [c for c in real_chats if 40 <= len(c.ids) <= 110][:N]
    assert len(chats) == N
    pairs = []
    for i, c in enumerate(chats):
        ids = torch.tensor(c.ids)
        st, final = real_target.boundaries(ids, torch.bfloat16, attn="sdpa")
        torch.save({"input_ids": ids, "loss_mask": torch.tensor(c.loss_mask), "hidden_state": final[None].clone(),
                    "aux_hidden_state": torch.cat([st[b] for b in aux], -1)[None].clone()},
                   train / f"data_{i}.ckpt")
        cap, _ = real_target.boundaries(ids, torch.bfloat16, attn="eager")
        obj = torch.cat([cap[b] for b in aux], -1).clone() if i % 2 else [cap[b].clone() for b in aux]
        torch.save(obj, infer / f"cap_{i}.pt")
        pairs.append((infer / f"cap_{i}.pt", f"data_{i}.ckpt"))
    return train, pairs


def test_the_samples_share_their_head(real_pairs):
    """The premise: every sample opens with the same system prompt (the states alone must tell them apart)."""
    train, _ = real_pairs
    heads = {tuple(torch.load(p, weights_only=True)["input_ids"][:17].tolist()) for p in train.glob("*.ckpt")}
    assert len(heads) == 1


def test_each_id_less_capture_pairs_with_its_own_sample_by_states(real_pairs, capsys):
    train, pairs = real_pairs
    margins, lines = [], []
    for cap, want in pairs:
        rc, out, err = run_command(pair_cmd, [cap, train, "--json", "--no-cache"], capsys)
        assert rc == 0, err
        r = json.loads(out)
        assert r["paired_by"] == "states", r
        top, second = r["matches"][0], r["matches"][1]
        assert top["path"].endswith(want), (cap.name, r["matches"][:3])
        assert top["score"] > 0.999 and top["shared_tokens"] > second["shared_tokens"], r["matches"][:3]
        margins.append(top["score"] - second["score"])
        lines.append(f"{cap.name}: {top['path']} {top['score']} ({top['shared_tokens']} rows) vs "
              f"{second['path']} {second['score']} ({second['shared_tokens']} rows)")
    print("\n".join(lines))  # after the loop: capsys takes what is printed inside it
    print(f"margin to the runner-up {min(margins):.4f}..{max(margins):.4f}")
    # the shared system prompt lifts every runner-up; the own sample still stands clear of it
    assert min(margins) > 0.01, margins
