"""A tiny Llama (tests/helpers/tiny_llama.py, saved with save_pretrained) and captures of its
states at known boundaries, in the producers' layouts."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from tests.helpers.tiny_llama import LAYERS, make_llama, prompt, run_states

L = LAYERS
DEFAULT = (2, L // 2, L - 3)  # the common EAGLE-3 capture


class World:
    """The model folder and its states (float32 and bf16 runs, cached) on a few prompts."""

    def __init__(self, root: Path):
        self.root = root
        self.model = make_llama(root / "llama")
        self._runs: dict = {}

    def states(self, i: int = 0, dtype=torch.bfloat16):
        key = (i, dtype)
        if key not in self._runs:
            self._runs[key] = run_states(self.model, prompt(i), dtype)
        return self._runs[key]

    def ids(self, i: int = 0) -> torch.Tensor:
        return torch.tensor(prompt(i))

    def specforge(self, name: str, boundaries=DEFAULT, *, final: str | None = "post", i: int = 0,
                  dtype=torch.bfloat16, pad: int = 0, with_ids: bool = True) -> Path:
        """SpecForge offline layout: aux_hidden_state [1, T, k*H] (+ hidden_state [1, T, H])."""
        bounds, post = self.states(i, dtype)
        aux = torch.cat([bounds[b] for b in boundaries], -1)
        ids = self.ids(i)
        mask = torch.ones_like(ids)
        d = {"aux_hidden_state": aux[None]}
        if final is not None:
            d["hidden_state"] = (post if final == "post" else bounds[L])[None]
        if pad:
            ids = torch.cat([ids, torch.zeros(pad, dtype=ids.dtype)])
            mask = torch.cat([mask, torch.zeros(pad, dtype=mask.dtype)])
            d = {k: torch.cat([v, torch.randn(1, pad, v.shape[-1]).to(v.dtype)], 1) for k, v in d.items()}
        if with_ids:
            d = {"input_ids": ids, "loss_mask": mask, **d}
        path = self.root / name
        torch.save(d, path)
        return path

    def speculators(self, name: str, boundaries=DEFAULT, i: int = 0) -> Path:
        """speculators current layout: hs_i.safetensors, token_ids [T], hidden_states [T, k+1, H]
        bf16, the last one the final residual before the norm."""
        from safetensors.torch import save_file

        bounds, _ = self.states(i)
        hs = torch.stack([bounds[b] for b in boundaries] + [bounds[L]], 1).contiguous()
        path = self.root / name
        save_file({"token_ids": self.ids(i), "hidden_states": hs}, str(path))
        return path

    def drafter(self, name: str, config: dict) -> Path:
        folder = self.root / name
        folder.mkdir(exist_ok=True)
        (folder / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLMEagle3"], **config}))
        return folder
