"""The demo's drafter: a one-layer EAGLE-3 drafter (SpecForge's layout) trained on the demo's own
training samples by demo/train_drafter.py, for the TUI's --drafter and `eagle3-tui accept`.
"""

from __future__ import annotations

import os

import torch

from eagle3_tui.demo.layout import DRAFTER_DIR
from eagle3_tui.demo.train_drafter import TrainSeq, save_drafter, train_drafter
from eagle3_tui.engines.read.load import load_sample

#: Adam steps of the demo drafter: ~4 s on one core; training samples reach 65-75% step-1
#: top-1 (chance is well under 1%), a capture one layer off falls to 7-35%
DRAFTER_STEPS = 400


def write_drafter(demo, steps: int = DRAFTER_STEPS, head=None) -> str:
    """Train the drafter on `demo`'s training samples (demo/dataset.py's _Demo) and save it into
    DIR/drafter. Its embeddings are the demo model's, so it needs no --model. Returns the drafter
    folder relative to the demo."""
    seqs = []
    for i in sorted(demo.train_files):
        s = load_sample(os.path.join(demo.dir, demo.train_files[i]))
        v = s.valid_len
        seqs.append(TrainSeq(s.ids[:v], s.loss_mask[:v], torch.cat([x.tensor[:v] for x in s.slots], dim=-1)))

    weights = train_drafter(seqs, embed=demo.model.embed.weight.detach(), head=head, steps=steps,
                            draft_vocab=256, seed=demo.seed)
    # SpecForge's layer ids read as "output of layer id": b = id + 1
    save_drafter(os.path.join(demo.dir, DRAFTER_DIR), weights, aux_layer_ids=[b - 1 for b in demo.aux])
    return DRAFTER_DIR
