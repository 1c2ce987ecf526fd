"""Files in SpecForge's offline layout, written from the demo transformer.

SpecForge runs the target on batches right-padded to the longest row (pad id 0, loss_mask 0) and
saves one file per row, keys in this order: input_ids [T], loss_mask [T], aux_hidden_state
[1, T, k*H] (the residual stream at the aux boundaries, before any norm) and hidden_state
[1, T, H] (the last layer's output after the final norm). The whole padded batch goes through
the model, so the pad rows carry real, non-zero states.
"""

from __future__ import annotations

import random
from pathlib import Path

import torch

from eagle3_tui.demo.prompt import Prompt
from eagle3_tui.demo.prompt import toy_prompt as _make_prompt
from eagle3_tui.demo.model import build_model

BATCH = 4


class SpecForgeWriter:
    """One seeded model and its prompts; writes SpecForge records of them to disk."""

    def __init__(self, seed: int, n_prompts: int = BATCH):
        self.seed = seed
        self.model = build_model(seed=seed)
        rng = random.Random(1000 + seed)
        self.prompts: list[Prompt] = [_make_prompt(rng, self.model.cfg.vocab) for _ in range(n_prompts)]

    def batch(self, boundaries, dtype=torch.float32, rows=None) -> list[dict[str, torch.Tensor]]:
        """SpecForge records of `rows` (default: every prompt) run together as one padded batch."""
        prompts = [self.prompts[i] for i in (rows if rows is not None else range(len(self.prompts)))]
        width = max(len(p.ids) for p in prompts)
        ids = torch.zeros(len(prompts), width, dtype=torch.int64)
        mask = torch.zeros(len(prompts), width, dtype=torch.int64)
        for r, p in enumerate(prompts):
            ids[r, : len(p.ids)] = torch.tensor(p.ids)
            mask[r, : len(p.ids)] = torch.tensor(p.loss_mask)
        states, final = self.model.boundaries(ids, dtype)
        aux = torch.cat([states[b] for b in boundaries], dim=-1)
        return [
            {
                "input_ids": ids[r].clone(),
                "loss_mask": mask[r].clone(),
                "aux_hidden_state": aux[r : r + 1].clone(),
                "hidden_state": final[r : r + 1].clone(),
            }
            for r in range(len(prompts))
        ]

    def single(self, i: int, boundaries, dtype=torch.float32, ids: list[int] | None = None) -> dict:
        """A batch-1 run (no padding) of prompt i, or of `ids`, in the same layout."""
        p = self.prompts[i]
        seq = list(ids if ids is not None else p.ids)
        mask = (p.loss_mask + [1] * len(seq))[: len(seq)]
        states, final = self.model.boundaries(torch.tensor(seq), dtype)
        return {
            "input_ids": torch.tensor(seq),
            "loss_mask": torch.tensor(mask),
            "aux_hidden_state": torch.cat([states[b] for b in boundaries], dim=-1)[None].clone(),
            "hidden_state": final[None].clone(),
        }


def save(record, path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(record, path)
    return str(path)
