"""A model, a drafter and a tokenizer that fit each other, and copies of them with one config
value changed (tests/configs). The model is the tiny Llama of tests/helpers/tiny_llama.py (8
layers, hidden 64, 256 tokens); the drafter has random weights in SpecForge's layout for that
model (the configs tests need it to load, not to draft well)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from eagle3_tui.demo.train_drafter import write_safetensors
from tests.helpers import warm_cli
from tests.helpers.drafter import config as drafter_config
from tests.helpers.drafter import init_weights
from tests.helpers.identify_world import World
from tests.helpers.processes import subprocess_env

VOCAB = 256
#: a run that takes longer has hung (the slowest honest run here takes a few seconds)
TIMEOUT = 60
#: address space of a run: memory that grows with a number in a config fails fast, not the machine
MEMORY = 4 << 30


def tokenizer_json(vocab: int = VOCAB) -> dict:
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": {f"w{i}": i for i in range(vocab)}, "unk_token": "w0"}}


class Folders:
    """root/llama (model + tokenizer.json), root/drafter, root/data/s{0,1}.ckpt."""

    def __init__(self, root: Path):
        self.root = root
        world = World(root)
        self.model = world.model
        (self.model / "tokenizer.json").write_text(json.dumps(tokenizer_json()))
        self.data = root / "data"
        self.data.mkdir()
        for i in range(2):
            shutil.move(world.specforge(f"s{i}.ckpt", i=i), self.data / f"s{i}.ckpt")
        self.sample = self.data / "s0.ckpt"
        self.drafter = self.write_drafter(root / "drafter")
        self._n = 0

    def write_drafter(self, folder: Path, *, cfg: dict | None = None, change=None) -> Path:
        g = torch.Generator().manual_seed(0)
        weights = {k: v.detach() for k, v in init_weights(g, VOCAB).items()}
        weights["embed_tokens.weight"] = torch.randn(VOCAB, 64, generator=g)
        if change is not None:
            change(weights)
        folder.mkdir(parents=True, exist_ok=True)
        config = cfg or {**drafter_config(VOCAB), "vocab_size": VOCAB}
        (folder / "config.json").write_text(json.dumps(config))
        write_safetensors({k: v.contiguous() for k, v in weights.items()}, str(folder / "model.safetensors"))
        return folder

    def _copy(self, src: Path) -> Path:
        """A copy of `src` whose files are hard links, config.json and tokenizer.json written anew."""
        self._n += 1
        dst = self.root / f"{src.name}-{self._n}"
        dst.mkdir()
        for entry in src.iterdir():
            if entry.name in ("config.json", "tokenizer.json"):
                shutil.copy(entry, dst / entry.name)
            else:
                os.link(entry, dst / entry.name)
        return dst

    def model_with(self, key: str, value) -> Path:
        folder = self._copy(self.model)
        cfg = json.loads((folder / "config.json").read_text())
        cfg[key] = value
        (folder / "config.json").write_text(json.dumps(cfg))
        return folder

    def drafter_with(self, key: str, value) -> Path:
        folder = self._copy(self.drafter)
        cfg = json.loads((folder / "config.json").read_text())
        cfg[key] = value
        (folder / "config.json").write_text(json.dumps(cfg))
        return folder

    def tokenizer_with(self, value) -> Path:
        """The model with a tokenizer.json whose token w5 has id `value`."""
        folder = self._copy(self.model)
        tok = tokenizer_json()
        tok["model"]["vocab"]["w5"] = value
        (folder / "tokenizer.json").write_text(json.dumps(tok))
        return folder


def run_cli(*args, timeout: float = TIMEOUT, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`eagle3-tui ARGS` as a user runs it; a run past `timeout` fails the test as a hang."""
    try:
        return warm_cli.run([sys.executable, "-m", "eagle3_tui", *map(str, args)], text=True, env=subprocess_env(),
                            cwd=cwd, timeout=timeout, memory=MEMORY)
    except subprocess.TimeoutExpired:
        pytest.fail(f"eagle3-tui {' '.join(map(str, args))}: no answer in {timeout} s (a hang)")


def said_in_one_line(p: subprocess.CompletedProcess, *, code: int = 2) -> str:
    """The one line on stderr of a run that exited `code`, with no traceback or warning."""
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert "Traceback" not in p.stderr and "Warning" not in p.stderr, p.stderr[-2000:]
    assert p.returncode == code, (p.returncode, p.stderr[-2000:])
    assert len(lines) == 1, p.stderr[-2000:]
    return lines[0]
