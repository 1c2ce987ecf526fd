"""A drafter trained here on the demo transformer's states and samples of the same world on disk
(a pytest plugin: `trained` serves the accept, scan and TUI tests)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from tests.helpers.drafter import AUX, World, aux_of, save_drafter, save_target_model, train

TRAIN_STEPS = 300


@dataclass
class Trained:
    world: World
    weights: dict
    drafter: Path  # SpecForge layout folder
    model: Path  # target-model folder (embedding, tied head, tokenizer.json)
    data: Path  # samples: train_*.ckpt (SpecForge offline schema) and captures
    held_out: list  # Seq objects not trained on
    train_acc: float  # the drafter's step-1 accuracy on its training data (loss rows)


def _save_sample(path: Path, seq, boundaries=AUX, dtype=torch.float32, *, mask=True, final=True) -> None:
    rec = {"input_ids": seq.ids.clone()}
    if mask:
        rec["loss_mask"] = seq.loss_mask.clone()
    rec["aux_hidden_state"] = torch.cat([seq.states[b] for b in boundaries], -1)[None].to(dtype).clone()
    if final:
        rec["hidden_state"] = seq.final[None].to(dtype).clone()
    torch.save(rec, path)


def _step1_accuracy(weights, seqs) -> float:
    from tests.helpers.drafter import reference_logits

    hit = total = 0
    for seq in seqs:
        lg = reference_logits(weights, aux_of(seq), seq.ids, 1)[0]
        draft = lg.argmax(-1)
        draft = draft + weights["d2t"][draft]
        T = len(seq.ids)
        rows = seq.loss_mask[: T - 2].bool()
        hit += int(((draft[: T - 2] == seq.ids[2:]) & rows).sum())
        total += int(rows.sum())
    return hit / total


@pytest.fixture(scope="session")
def trained(tmp_path_factory) -> Trained:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        world = World()
        rng = random.Random(1)
        seqs = [world.rule_seq(rng, rng.randint(10, 40), 60) for _ in range(80)]
        held_out = [world.rule_seq(rng, 30, 60) for _ in range(3)]
        weights = train(world, seqs, steps=TRAIN_STEPS, ttt=2, seed=0)
        root = tmp_path_factory.mktemp("accept")
        drafter = save_drafter(str(root / "drafter"), weights)
        model = save_target_model(str(root / "target"), world)
        data = root / "data"
        data.mkdir()
        for i, seq in enumerate(held_out):
            _save_sample(data / f"train_{i}.ckpt", seq)
            # the engine's capture of the same prompt: bf16, prompt+response, no loss mask
            _save_sample(data / f"ok_bf16_{i}.pt", seq, dtype=torch.bfloat16, mask=False, final=False)
            order = [AUX[2], AUX[0], AUX[1]]
            _save_sample(data / f"permuted_{i}.pt", seq, boundaries=order, dtype=torch.bfloat16, mask=False,
                         final=False)
            _save_sample(data / f"late_{i}.pt", seq, boundaries=[b + 1 for b in AUX], dtype=torch.bfloat16,
                         mask=False, final=False)
        acc = _step1_accuracy(weights, seqs[:10])
        return Trained(world, weights, Path(drafter), Path(model), data, held_out, acc)
    finally:
        torch.set_num_threads(threads)
