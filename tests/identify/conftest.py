"""A tiny Llama (saved with save_pretrained) and captures of its states at known boundaries.

The SSH fixtures are the ones of tests/ssh (real OpenSSH sshd and an asyncssh server).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from tests.identify.tiny import LAYERS, make_llama, prompt, run_states
from tests.ssh.conftest import (  # noqa: F401 - fixtures reused as they are
    _box_pool,
    _no_ssh_agent,
    client_files,
    inprocess_server,
    keys,
    python_without_torch,
    server,
    shared_box,
    sshd,
    untouched,
)
from tests.torch_threads import _one_torch_thread  # noqa: F401 - autouse fixture

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


@pytest.fixture(scope="session")
def world(tmp_path_factory) -> World:
    return World(tmp_path_factory.mktemp("identify"))


@pytest.fixture(scope="session")
def python_without_transformers(tmp_path_factory) -> str:
    """The test Python (torch included) with transformers made unimportable by a sitecustomize,
    as a `--remote-python` shell fragment (the setting allows `conda run ...`-style commands)."""
    site = tmp_path_factory.mktemp("no-transformers")
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['transformers'] = None\n")
    return f"env PYTHONPATH={site} {sys.executable}"
