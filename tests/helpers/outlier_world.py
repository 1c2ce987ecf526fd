"""Datasets with a minority captured at other layers, scattered or in runs, made by the demo
transformer in the producers' layouts: ModelOpt's HF dump ({conversation_id}.pt, no index order)
and SpecForge's offline shards (rows_{g}-{g+G}/data_{i}.ckpt)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import torch

from eagle3_tui.demo.model import build_model
from tests.helpers.scan_build import _prompt, build

_MODEL = None


def model():
    global _MODEL
    if _MODEL is None:
        _MODEL = build_model(seed=0)
    return _MODEL


def modelopt_set(root: Path, n: int, *, seed: int = 0, target=None) -> list[Path]:
    """n conversations in ModelOpt's HF dump layout: input_ids [T], aux_hidden_states [T, 3H] at the
    default boundaries, hidden_states [T, H] post-norm, loss_mask [T], conversation_id. `target`:
    another model with the demo model's interface (tests/helpers/hf_target.py)."""
    m = target or model()
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for _ in range(n):
        ids, mask = _prompt(rng, m.cfg.vocab)
        ids_t = torch.tensor([ids])
        states, final = m.boundaries(ids_t, torch.float32)
        conv = f"{rng.getrandbits(64):016x}"
        path = root / f"{conv}.pt"
        torch.save({"input_ids": ids_t[0], "aux_hidden_states": torch.cat([states[b][0] for b in m.cfg.aux_boundaries], -1),
                    "hidden_states": final[0], "loss_mask": torch.tensor(mask), "conversation_id": conv}, path)
        paths.append(path)
    return sorted(paths)


def specforge_set(root: Path, *, shards: int = 3, per_shard: int = 16, seed: int = 0) -> dict[int, Path]:
    return build(root, shards=shards, per_shard=per_shard, seed=seed, model=model())


def replant(path: Path, shift: int, target=None) -> None:
    """Capture the file's prompt again with every aux boundary moved by `shift` (a re-run with
    other layer ids), in the file's own layout."""
    m = target or model()
    d = torch.load(path, weights_only=True)
    key = "aux_hidden_states" if "aux_hidden_states" in d else "aux_hidden_state"
    ids = d["input_ids"].reshape(1, -1)
    states, _ = m.boundaries(ids, torch.float32)
    aux = torch.cat([states[b + shift] for b in m.cfg.aux_boundaries], -1)
    d[key] = aux if key == "aux_hidden_state" else aux[0]
    torch.save(d, path)


def copy_set(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst
