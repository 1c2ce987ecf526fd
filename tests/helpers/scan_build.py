"""Datasets for scan tests, made by the demo transformer in SpecForge's exact layout.

build(root, ...) writes rows_{g}-{g+G}/data_{i}.ckpt files (batches of 4, right-padded with id 0,
loss mask 0 and the real, non-zero states the padded batch run gives those rows).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import torch

from eagle3_tui.demo.model import build_model

PER_SHARD = 12


def _prompt(rng: random.Random, vocab: int) -> tuple[list[int], list[int]]:
    head = [1, 3, 10, 11, 4, 5] + [rng.randrange(20, vocab) for _ in range(rng.randint(12, 50))] + [6, 13, 7]
    resp = [rng.randrange(20, vocab) for _ in range(rng.randint(10, 50))] + [2]
    return head + resp, [0] * len(head) + [1] * len(resp)


def build(root: Path, *, shards: int = 3, per_shard: int = PER_SHARD, shifted_shard: int | None = None,
          seed: int = 0, skip: tuple[int, ...] = (), model=None) -> dict[int, Path]:
    """Write the dataset; returns index -> path. `shifted_shard` is written with every layer id
    one lower (boundaries {1, 4, 6} instead of {2, 5, 7}): a re-run under the other convention.
    `model` makes the states (default: the demo transformer); anything with its `cfg` and
    `boundaries(ids, dtype)` will do, e.g. tests/scan/hf_target.py's saved Hugging Face model."""
    model = model if model is not None else build_model(seed=0)
    cfg = model.cfg
    rng = random.Random(seed)
    files: dict[int, Path] = {}
    for s in range(shards):
        aux_b = list(cfg.aux_boundaries)
        if s == shifted_shard:
            aux_b = [b - 1 for b in aux_b]
        shard = root / f"rows_{s * per_shard}-{(s + 1) * per_shard}"
        shard.mkdir(parents=True, exist_ok=True)
        indices = [i for i in range(s * per_shard, (s + 1) * per_shard)]
        for start in range(0, len(indices), 4):
            batch = indices[start : start + 4]
            prompts = [_prompt(rng, cfg.vocab) for _ in batch]
            width = max(len(p[0]) for p in prompts)
            ids = torch.zeros(len(batch), width, dtype=torch.int64)
            mask = torch.zeros(len(batch), width, dtype=torch.int64)
            for row, (pi, pm) in enumerate(prompts):
                ids[row, : len(pi)] = torch.tensor(pi)
                mask[row, : len(pm)] = torch.tensor(pm)
            states, final = model.boundaries(ids, torch.float32)
            aux = torch.cat([states[b] for b in aux_b], dim=-1)
            for row, i in enumerate(batch):
                if i in skip:
                    continue
                path = shard / f"data_{i}.ckpt"
                torch.save({"input_ids": ids[row].clone(), "loss_mask": mask[row].clone(),
                            "aux_hidden_state": aux[row : row + 1].clone(),
                            "hidden_state": final[row : row + 1].clone()}, path)
                files[i] = path
    return files


def rewrite(path: Path, **change) -> None:
    """Load a sample, change some keys, save it again under the same name."""
    d = torch.load(path, weights_only=True)
    d.update(change)
    torch.save(d, path)
    os.utime(path)
