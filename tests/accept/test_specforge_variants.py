"""accept against SpecForge's own code: drafters built and fine-tuned by SpecForge's
LlamaForCausalLMEagle3 (fc_norm on and off, norm_output on and off) on the demo transformer's
states, saved as SpecForge saves them; accept's per-step hits on held-out samples equal the
hits SpecForge's training step counts (tests/helpers/specforge_drafter.py)."""

from __future__ import annotations

import random

import pytest
import torch

from eagle3_tui.engines.model.accept import accept_file
from tests.helpers import specforge_drafter as sf
from tests.helpers.drafter import AUX, H, aux_of, save_drafter

VARIANTS = {"plain": (False, True), "norm_output false": (False, False), "fc_norm": (True, True),
            "fc_norm, norm_output false": (True, False)}


@pytest.fixture(scope="module")
def variants(trained, tmp_path_factory):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rng = random.Random(7)
        seqs = [trained.world.rule_seq(rng, rng.randint(10, 30), 50) for _ in range(16)]
        root = tmp_path_factory.mktemp("specforge_variants")
        out = {}
        for name, (fc_norm, norm_output) in VARIANTS.items():
            start = dict(trained.weights)
            if fc_norm:  # each state's RMS over the training rows: fc sees its states at their own scale
                for j, b in enumerate(AUX):
                    rms = torch.cat([s.states[b] for s in seqs]).pow(2).mean(-1).sqrt().mean()
                    start[f"fc_norm.{j}.weight"] = torch.full((H,), float(rms))
            model = sf.build(start, fc_norm=fc_norm, norm_output=norm_output)
            if name != "plain":
                sf.fine_tune(model, seqs, aux_of, steps=30)
            state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            folder = save_drafter(str(root / name.replace(" ", "_").replace(",", "")), state,
                                  cfg=sf.config_of(fc_norm=fc_norm, norm_output=norm_output))
            out[name] = (model, folder, state)
        return out
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_accept_counts_specforges_own_hits_per_step(trained, variants, name):
    model, folder, _state = variants[name]
    for i, seq in enumerate(trained.held_out):
        want = sf.hits(model, aux_of(seq), seq.ids, seq.loss_mask, 3)
        r = accept_file(str(trained.data / f"train_{i}.ckpt"), folder, steps=3)
        assert "error" not in r, r
        assert r["target_source"] == "ids"
        assert r["rows"] == want[0][1]
        got = [round(acc * rows) for acc, (_h, rows) in zip(r["steps"], want)]
        assert got == [h for h, _ in want], (name, i, got, want)
    shape = r["drafter_info"]["shape"]
    assert shape.startswith("SpecForge, 1 layer") and "3 aux states, draft vocab 320" in shape
    assert ("fc_norm" in shape) == VARIANTS[name][0]
    assert ("logits without the final norm" in shape) == (not VARIANTS[name][1])


def test_fc_norm_changes_what_specforge_drafts(trained, variants):
    """The fc_norm drafter's hits are not those of the same weights run without fc_norm (what
    accept computed before it applied fc_norm): the check above can tell them apart."""
    model, _folder, state = variants["fc_norm"]
    without = sf.build({k: v for k, v in state.items() if not k.startswith("fc_norm.")}, fc_norm=False)
    differ = 0
    for seq in trained.held_out:
        args = (aux_of(seq), seq.ids, seq.loss_mask, 3)
        differ += sf.hits(model, *args) != sf.hits(without, *args)
    assert differ >= 1
