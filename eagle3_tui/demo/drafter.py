"""The demo's drafter: a one-layer EAGLE-3 drafter (SpecForge's layout) trained on the demo's own
training samples by demo/train_drafter.py, for the TUI's --drafter and `eagle3-tui accept`.

It is trained over DRAFTER_TTT steps of SpecForge's test-time training (each step fed the
drafter's own previous output), as many as `accept` rolls out by default: trained on two, it
scored 0-7% at the third, where its own fed-back states were unlike anything it had seen, and a
correct capture could not be told from a faulty one there.
"""

from __future__ import annotations

import os
from typing import Callable

import torch

from eagle3_tui.demo.layout import DRAFTER_DIR
from eagle3_tui.demo.train_drafter import TrainSeq, save_drafter, train_drafter
from eagle3_tui.engines.read.load import load_sample

#: Adam steps of the demo drafter: ~3.5 s of one core. Seed 0's data_0 reaches 73% / 72% / 69%
#: at steps 1-3 (loss rows; chance is well under 1%); a capture one layer late falls to ~15-20%
DRAFTER_STEPS = 350
#: TTT steps it is trained on: accept's default draft length (--steps 3)
DRAFTER_TTT = 3


def write_drafter(demo, steps: int = DRAFTER_STEPS, head=None, ttt: int = DRAFTER_TTT, *,
                  say: Callable[[str], None] = lambda _s: None) -> str:
    """Train the drafter on `demo`'s training samples (demo/dataset.py's _Demo) and save it into
    DIR/drafter. Its embeddings are the demo model's, so it needs no --model. `say` hears its
    progress every 25 Adam steps. Returns the drafter folder relative to the demo."""
    seqs = []
    for i in sorted(demo.train_files):
        s = load_sample(os.path.join(demo.dir, demo.train_files[i]))
        v = s.valid_len
        seqs.append(TrainSeq(s.ids[:v], s.loss_mask[:v], torch.cat([x.tensor[:v] for x in s.slots], dim=-1)))

    def progress(done: int) -> None:
        say(f"training the drafter {done}/{steps}")

    weights = train_drafter(seqs, embed=demo.model.embed.weight.detach(), head=head, steps=steps,
                            ttt=ttt, draft_vocab=256, seed=demo.seed,
                            progress=progress)
    # SpecForge's layer ids read as "output of layer id": b = id + 1
    save_drafter(os.path.join(demo.dir, DRAFTER_DIR), weights, aux_layer_ids=[b - 1 for b in demo.aux])
    return DRAFTER_DIR
