"""Scan datasets of the real model's states (tests/helpers/real_world.py), in the producers' exact
layouts (docs FORMATS.md), with an optional minority captured one boundary deeper.

- `specforge`: rows_0-2000/data_{i}.ckpt, batches of 4 run together right-padded with id 0 and
  loss mask 0 (the pad rows carry the padded run's real states), bf16 under SDPA;
- `modelopt`: {conversation_id}.pt with aux_hidden_states [T, 3H] and post-norm hidden_states;
- `speculators`: hs_{i}.safetensors, token_ids [T] and hidden_states [T, 4, H] (the 3 aux states
  and the last layer's residual before the norm), bf16;
- `lengths`: SpecForge's layout, one request a file, each chat cut at a different length.

A seed picks which chats (of the 64), their order and the batching. Batch-1 states (every boundary
the worlds use, bf16) are computed once per machine and cached beside the model; batched runs are
computed when written.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
from pathlib import Path

import torch

#: the model's aux boundaries (2, 15, 27), one deeper (3, 16, 28) and one shallower, and b = L
KEEP = (1, 2, 3, 14, 15, 16, 26, 27, 28, 30)


class RealWorld:
    def __init__(self, target, chats, cache: Path):
        self.target, self.chats, self.cache = target, chats, Path(cache)
        self.aux = tuple(target.cfg.aux_boundaries)
        self.L = target.cfg.layers
        self._states = None

    # ------------------------------------------------------------------ states
    def states(self, i: int) -> dict:
        """Chat i run alone in bf16 (SDPA): {b: [T, H] for b in KEEP, "final": post-norm [T, H]}."""
        if self._states is None:
            key = hashlib.sha256(json.dumps([[c.ids for c in self.chats], KEEP]).encode()).hexdigest()[:16]
            path = self.cache / f"states-bf16-{key}.pt"
            self.cache.mkdir(parents=True, exist_ok=True)
            # one computer at a time: the suite's xdist workers share this cache
            with open(self.cache / f"states-bf16-{key}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if path.is_file():
                    self._states = torch.load(path, weights_only=True)
                else:
                    out = []
                    for c in self.chats:
                        st, final = self.target.boundaries(torch.tensor(c.ids), torch.bfloat16)
                        out.append({**{str(b): st[b].clone() for b in KEEP}, "final": final.clone()})
                    tmp = path.with_suffix(f".{os.getpid()}.tmp")
                    torch.save(out, tmp)
                    tmp.replace(path)
                    self._states = out
        return self._states[i]

    def _aux(self, st: dict, shift: int, rows=slice(None)) -> torch.Tensor:
        return torch.cat([st[str(b + shift)][rows] for b in self.aux], -1)

    def pick(self, n: int, seed: int) -> list[int]:
        """n different chats, in the seed's order."""
        return random.Random(seed).sample(range(len(self.chats)), n)

    # ------------------------------------------------------------------ layouts
    def modelopt(self, root: Path, n: int, seed: int, odd: dict[int, int] | None = None) -> list[Path]:
        """ModelOpt's HF dump: {conversation_id}.pt. odd: {position in the written order: shift}."""
        root.mkdir(parents=True, exist_ok=True)
        rng = random.Random(seed + 7919)
        paths = []
        for pos, i in enumerate(self.pick(n, seed)):
            st, chat = self.states(i), self.chats[i]
            conv = f"{rng.getrandbits(64):016x}"
            path = root / f"{conv}.pt"
            torch.save({"input_ids": torch.tensor(chat.ids), "aux_hidden_states": self._aux(st, (odd or {}).get(pos, 0)),
                        "hidden_states": st["final"].clone(), "loss_mask": torch.tensor(chat.loss_mask),
                        "conversation_id": conv}, path)
            paths.append(path)
        return paths

    def speculators(self, root: Path, n: int, seed: int, odd: dict[int, int] | None = None) -> list[Path]:
        """speculators' current layout: hs_{i}.safetensors, hidden_states [T, k+1, H] with the last
        layer's residual (before the norm) last."""
        from safetensors.torch import save_file

        root.mkdir(parents=True, exist_ok=True)
        paths = []
        for pos, i in enumerate(self.pick(n, seed)):
            st, shift = self.states(i), (odd or {}).get(pos, 0)
            hs = torch.stack([st[str(b + shift)] for b in self.aux] + [st[str(self.L)]], 1).contiguous()
            path = root / f"hs_{pos}.safetensors"
            save_file({"token_ids": torch.tensor(self.chats[i].ids), "hidden_states": hs}, str(path))
            paths.append(path)
        return paths

    def lengths(self, root: Path, n: int, seed: int, odd: dict[int, int] | None = None) -> list[Path]:
        """SpecForge's layout, one request a file (no padding), each chat cut at its own length
        (from just past the prompt to the whole answer): a causal prefix's states are the run's."""
        shard = root / "rows_0-2000"
        shard.mkdir(parents=True, exist_ok=True)
        rng = random.Random(seed + 104729)
        paths = []
        for pos, i in enumerate(self.pick(n, seed)):
            st, chat = self.states(i), self.chats[i]
            t = rng.randint(min(len(chat.ids), chat.response_start + 2), len(chat.ids))
            path = shard / f"data_{pos}.ckpt"
            torch.save({"input_ids": torch.tensor(chat.ids[:t]), "loss_mask": torch.tensor(chat.loss_mask[:t]),
                        "aux_hidden_state": self._aux(st, (odd or {}).get(pos, 0), slice(0, t))[None].clone(),
                        "hidden_state": st["final"][:t][None].clone()}, path)
            paths.append(path)
        return paths

    def specforge(self, root: Path, n: int, seed: int, odd: dict[int, int] | None = None, batch: int = 4,
                  shifted_shard: int | None = None, per_shard: int = 2000) -> list[Path]:
        """SpecForge offline: rows_{g}-{g+G}/data_{i}.ckpt, `batch` chats run together, padded on the
        right with id 0 and loss mask 0, bf16 (SDPA). shifted_shard: a whole shard one boundary deeper."""
        picked = self.pick(n, seed)
        paths = []
        for start in range(0, n, batch):
            rows = picked[start : start + batch]
            width = max(len(self.chats[i].ids) for i in rows)
            ids = torch.zeros(len(rows), width, dtype=torch.int64)
            mask = torch.zeros(len(rows), width, dtype=torch.int64)
            for r, i in enumerate(rows):
                ids[r, : len(self.chats[i].ids)] = torch.tensor(self.chats[i].ids)
                mask[r, : len(self.chats[i].ids)] = torch.tensor(self.chats[i].loss_mask)
            states, final = self.target.boundaries(ids, torch.bfloat16)
            for r in range(len(rows)):
                pos = start + r
                shard_no = pos // per_shard
                shift = (odd or {}).get(pos, 0) + (1 if shard_no == shifted_shard else 0)
                shard = root / f"rows_{shard_no * per_shard}-{(shard_no + 1) * per_shard}"
                shard.mkdir(parents=True, exist_ok=True)
                path = shard / f"data_{pos}.ckpt"
                torch.save({"input_ids": ids[r].clone(), "loss_mask": mask[r].clone(),
                            "aux_hidden_state": torch.cat([states[b + shift][r : r + 1] for b in self.aux], -1).clone(),
                            "hidden_state": final[r : r + 1].clone()}, path)
                paths.append(path)
        return paths


def scattered(n: int, share: float, seed: int, shift: int = 1) -> dict[int, int]:
    """A minority of round(n * share) positions (at least 1), scattered at random: {position: shift}."""
    k = max(1, round(n * share))
    return {p: shift for p in random.Random(seed * 31 + k).sample(range(n), k)}
