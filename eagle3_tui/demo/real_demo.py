"""`eagle3-tui demo --real`: the demo dataset built from a real pretrained model (SmolLM2-135M-Instruct,
demo/real_model.py) instead of the seeded transformer.

The same layout and fault catalogue as the default demo (demo/dataset.py, demo/faults.py), with what
only a real model has: the model's own greedy answers to real questions (demo/real_questions.py),
massive activations (row 0's residual norm ~25,000 against ~150-600 elsewhere), a training run in
bf16 with SDPA attention in right-padded batches (as SpecForge's) against one-request bf16 captures
with eager attention, the model folder (hard-linked from the cache when it can be), and a drafter
trained on the states, so that `accept` shows what a one-off capture costs.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Callable

import torch

from eagle3_tui.demo import dataset as base
from eagle3_tui.demo.drafter import write_drafter
from eagle3_tui.demo.folder import check_target, demo_options, unstamp, write_stamp
from eagle3_tui.demo.layout import MODEL_DIR, N_TRAIN, SHARD
from eagle3_tui.demo.manifest import DemoManifest, manifest
from eagle3_tui.demo.prompt import Prompt
from eagle3_tui.demo.readme import at, train_lines
from eagle3_tui.demo.real_model import RealTarget, chats, missing, model_folder
from eagle3_tui.demo.real_questions import QUESTIONS

#: Adam steps of the real demo's drafter (H 576, draft vocabulary 256): ~1 minute on one core
REAL_DRAFTER_STEPS = 300
#: TTT steps: still two, as when README.md's figures for the real demo were measured (a third
#: makes its drafter ~1.5x slower to train; the seeded demo's trains three, demo/drafter.py)
REAL_DRAFTER_TTT = 2
#: answers of at most this many tokens (SmolLM2 closes most answers sooner or is cut here)
MAX_NEW = 64
#: the shortest chat the demo takes: the NaN capture writes rows 30-41
MIN_TOKENS = 48


class TokenizerAdapter:
    """The Hugging Face tokenizer with the demo BPE's interface: encode(text) without special
    tokens, vocab (token -> id), save(path), len()."""

    def __init__(self, tokenizer):
        self.hf = tokenizer
        self.vocab = tokenizer.get_vocab()

    def encode(self, text: str) -> list[int]:
        return list(self.hf.encode(text, add_special_tokens=False))

    def save(self, path: str) -> None:
        self.hf.save_pretrained(os.path.dirname(path))

    def __len__(self) -> int:
        return len(self.hf)


class RealDemo(base._Demo):
    """The demo of demo/dataset.py on the real model: its states, its chats, its own LM head."""

    def __init__(self, directory: str, seed: int, drafter: bool, target, chats: list):
        # no super().__init__: it builds the seeded transformer and trains a BPE, neither used here
        self.dir = directory
        self.seed = seed
        self.drafter = drafter
        self.model = target  # the base class's calls (boundaries, head) are RealTarget's too
        self.target: RealTarget = target
        self.cfg = target.cfg
        self.rng = random.Random(seed)
        self.tokenizer = TokenizerAdapter(target.tokenizer)
        self.aux = list(self.cfg.aux_boundaries)
        self.chats = chats
        self.prompts: dict[int, Prompt] = {}
        self.train_files: dict[int, str] = {}
        self.padded: dict[int, list[int]] = {}
        self.captures: list = []
        self.other_train: list[str] = []
        self.train_dtype = torch.bfloat16  # SpecForge's training run: bf16, SDPA, padded batches
        self.say: Callable[[str], None] = lambda _s: None

    def run(self, ids: list[int], dtype=torch.bfloat16):
        """One request of a bf16 inference engine: eager attention, no batch."""
        return self.target.boundaries(torch.tensor(ids, dtype=torch.int64), dtype, attn="eager")

    def make_prompts(self) -> dict[int, Prompt]:
        long = [c for c in self.chats if len(c.ids) >= MIN_TOKENS]
        if len(long) < N_TRAIN:
            raise ValueError(f"the real demo needs {N_TRAIN} chats of {MIN_TOKENS}+ tokens, has {len(long)}")
        return {i: Prompt(list(c.ids), c.response_start) for i, c in enumerate(self.rng.sample(long, N_TRAIN))}

    def fit_head(self, head_data) -> None:
        """A real model has its own LM head: nothing to fit."""

    def write_model(self) -> None:
        """The cached Hugging Face folder, hard-linked file by file (copied across filesystems)."""
        folder = Path(self.dir) / MODEL_DIR
        folder.mkdir(parents=True, exist_ok=True)
        for src in sorted(Path(self.target.folder).iterdir()):
            if not src.is_file() or src.name.startswith("chats-"):
                continue
            dest = folder / src.name
            if dest.exists():
                if dest.stat().st_size == src.stat().st_size:
                    continue
                dest.unlink()
            try:
                os.link(src, dest)
            except OSError:
                shutil.copyfile(src, dest)

    def model_lines(self) -> list[str]:
        cfg = self.cfg
        return [
            f"Hidden states of a real pretrained model, SmolLM2-135M-Instruct (Llama, L={cfg.layers} layers,",
            f"H={cfg.hidden}, vocab {cfg.vocab:,}), auxiliary slots at boundaries b = {self.aux} (SpecForge's",
            "default layer ids, b = id + 1), so every slot is [T, H] and aux_hidden_state is [1, T, 3H].",
            "The chats are real questions answered by the model itself (greedy), in its ChatML template;",
            "loss_mask is 1 on the answer. Like every real model it has massive activations: row 0",
            "(<|im_start|>) carries a residual norm ~100x the other rows' at the middle layers.",
            "",
            f"train/{SHARD}/data_{{i}}.ckpt   SpecForge offline schema, bf16 (SDPA, padded batches): input_ids,",
            "    loss_mask,",
            *train_lines(),
            f"{MODEL_DIR}/  the model (config.json, model.safetensors float32, tokenizer files). It names the",
            "    layer of every slot (captures are bf16 single-request runs with eager attention):",
            f"    eagle3-tui identify {at(self, self.train_files[0])} --model {at(self, MODEL_DIR)}",
            "    the TUI on a sample with its tokens as text:",
            f"    eagle3-tui {at(self, self.train_files[0])} --tokenizer {at(self, MODEL_DIR)}",
        ]


def write_real_demo(directory: str, seed: int = 0, *, drafter: bool = True,
                    say: Callable[[str], None] = lambda _s: None, cache: Path | None = None) -> DemoManifest:
    """Write the real demo into `directory` (new, empty, or an earlier demo) and return write_demo's
    manifest. Builds (once) the model folder and the model's answers, cached under the user cache
    dir (or `cache`). Raises RuntimeError with the install line when the extra is missing."""
    lacking = missing()
    if lacking:
        raise RuntimeError(lacking)
    check_target(directory)
    os.makedirs(directory, exist_ok=True)
    unstamp(directory)
    step = say

    step("the real model (SmolLM2-135M-Instruct)")
    target = RealTarget(model_folder(cache, say=step))
    conversations = chats(target, QUESTIONS, max_new=MAX_NEW, cache=cache, say=step)
    demo = RealDemo(directory, seed, drafter, target, conversations)
    base.write_parts(demo, say=step)
    drafter_dir = None
    if drafter:
        step(f"training a drafter on train/ ({REAL_DRAFTER_STEPS} steps)")
        drafter_dir = write_drafter(demo, steps=REAL_DRAFTER_STEPS, head=target.head(), ttt=REAL_DRAFTER_TTT,
                                    say=step)
    written = manifest(demo, drafter_dir)
    write_stamp(directory, demo_options(seed, drafter, real=True), written)
    return written
