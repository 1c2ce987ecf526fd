"""Samples at real size in SpecForge's layout (T 2,048, H 4,096, 3 slots, bf16: 64 MiB a file),
made fast from two random bases instead of a model: every file rolls them by its own offset, so
its rows (and its fingerprint) are its own, and mixes them into slots whose norms and neighbour
cosines say which layers they are. Used by tests/scan/test_budget.py and bench/bench_budget.py.

    write_dataset(root, files=16, group=range(6, 10), padded=range(0, 3), duplicate=(2, 13))

write_batched(root, files) writes what SpecForge's offline pipeline writes for real chats instead:
each batch of 4 padded on the right to its longest chat, so T varies from batch to batch and the
valid rows from file to file (FORMATS.md: 1 to 82 pad rows; 23 of 32 samples padded).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import torch

T, H, K = 2048, 4096, 3
#: each slot's norm over the final state's, and the cosine of slot 1 with slot 0
LAYERS = {"usual": ((0.5, 1.0, 2.0), 0.6), "other": ((0.8, 1.6, 2.0), 0.3)}
PAD_ROWS = 200


class Bases:
    """Two random [T, H] float32 bases, made once (the cost of a file is then a roll and a save)."""

    def __init__(self, seed: int = 0):
        g = torch.Generator().manual_seed(seed)
        self.b1 = torch.randn(T, H, generator=g)
        self.b2 = torch.randn(T, H, generator=g)

    def sample(self, i: int, layers: str = "usual", pad: int = 0, nan_row: int | None = None, t: int = T) -> dict:
        """Sample i: t rows (the first t of the T it would have), the last `pad` of them padding."""
        rng = random.Random(i)
        shift = 37 * i + 1
        b1, b2 = self.b1.roll(shift, 0)[:t], self.b2.roll(shift, 0)[:t]
        scales, c = LAYERS[layers]
        jitter = [1 + 0.02 * (rng.random() - 0.5) for _ in range(K)]
        final = (b1 + b2) * 0.7071
        slots = [b1 * (scales[0] * jitter[0]),
                 (b1 * c + b2 * (1 - c * c) ** 0.5) * (scales[1] * jitter[1]),
                 b2 * (scales[2] * jitter[2])]
        aux = torch.cat(slots, dim=-1)
        if nan_row is not None:
            aux[nan_row, H + 7] = float("nan")
        g = torch.Generator().manual_seed(1000 + i)
        ids = torch.randint(20, 32000, (T,), generator=g)[:t].clone()
        mask = torch.ones(t, dtype=torch.int64)
        if pad:  # SpecForge right padding: ids 0, loss mask 0, states of the padded batch
            ids[-pad:] = 0
            mask[-pad:] = 0
        return {"input_ids": ids, "loss_mask": mask, "aux_hidden_state": aux[None].to(torch.bfloat16),
                "hidden_state": final[None].to(torch.bfloat16)}


def write_dataset(root: Path, files: int = 16, group=range(6, 10), padded=range(3),
                  duplicate: tuple[int, int] | None = (2, 13), nan_file: int | None = 14) -> dict[str, list[str]]:
    """`files` samples in root/rows_0-N/data_i.ckpt: `group` at other layers, `padded` ending in
    padding, data_{duplicate[1]} a copy of data_{duplicate[0]}, one NaN in row 0 of nan_file.
    Returns what was planted, as relative paths per finding code. (The layer_group finding's
    permutation test needs the run to be unlikely by chance, and to be a minority: 4 of 16 files
    in a row is; 4 of 12 is not (1 shuffle in 55 puts them side by side), nor is 7 of 20.)"""
    shard = root / f"rows_0-{files}"
    shard.mkdir(parents=True, exist_ok=True)
    bases = Bases()
    for i in range(files):
        if duplicate is not None and i == duplicate[1]:
            continue
        layers = "other" if i in group else "usual"
        torch.save(bases.sample(i, layers, PAD_ROWS if i in padded else 0, 0 if i == nan_file else None),
                   shard / f"data_{i}.ckpt")
    if duplicate is not None:
        shutil.copyfile(shard / f"data_{duplicate[0]}.ckpt", shard / f"data_{duplicate[1]}.ckpt")
    rel = lambda i: f"{shard.name}/data_{i}.ckpt"
    planted = {"layer_group": [rel(i) for i in group], "padding_states": [rel(i) for i in padded]}
    if duplicate is not None:
        planted["duplicate"] = sorted(rel(i) for i in duplicate)
        if duplicate[0] in padded:
            planted["padding_states"].append(rel(duplicate[1]))
    if nan_file is not None:
        planted["nonfinite"] = [rel(nan_file)]
    return {k: sorted(v) for k, v in planted.items()}


def write_batched(root: Path, files: int = 40, seed: int = 5) -> None:
    """`files` samples in root/rows_0-N/data_i.ckpt in batches of 4: a batch's T between 1,024 and
    2,048, three of its four chats shorter than the longest by 1 to 82 rows (ids 0, loss mask 0,
    states of the padded batch on those rows)."""
    shard = root / f"rows_0-{files}"
    shard.mkdir(parents=True, exist_ok=True)
    bases, rng = Bases(), random.Random(seed)
    for start in range(0, files, 4):
        t = rng.randrange(1024, T + 1)
        for i in range(start, min(start + 4, files)):
            pad = 0 if i == start else rng.randrange(1, 83)
            torch.save(bases.sample(i, pad=pad, t=t), shard / f"data_{i}.ckpt")
