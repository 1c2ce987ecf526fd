"""The target model of `scan --model` tests: a tiny Llama saved with save_pretrained (the fixture
of tests/helpers/tiny_llama.py, shaped as the demo transformer: 10 layers, H 64, vocab 1000), wrapped
so that tests/helpers/scan_build.py writes its datasets with it.

(The demo transformer itself is a Llama too, saved by demo/hf_folder.py; these tests keep an
independent model made by transformers' own save_pretrained.)
"""

from __future__ import annotations

from pathlib import Path

import torch

from eagle3_tui.demo.model import TinyDecoderConfig
from tests.helpers.tiny_llama import make_llama

CFG = TinyDecoderConfig()  # layers 10, hidden 64, vocab 1000: aux boundaries (2, 5, 7), as the demo's


class HFTarget:
    """A saved HF Llama with the demo model's interface: cfg and boundaries(ids, dtype)."""

    def __init__(self, folder: Path):
        from transformers import LlamaForCausalLM

        self.folder = folder
        self.cfg = CFG
        self.lm = LlamaForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()

    @torch.no_grad()
    def boundaries(self, ids: torch.Tensor, dtype: torch.dtype = torch.float32):
        """(states b = 0..L, each [B, T, H] with b = L before the final norm; post-norm final)."""
        seen = {}
        handle = self.lm.model.norm.register_forward_hook(lambda _m, a, out: seen.update(pre=a[0], post=out))
        try:
            # right padding and no attention mask: causal attention keeps padding out of the real rows
            out = self.lm(ids, output_hidden_states=True, use_cache=False)
        finally:
            handle.remove()
        states = list(out.hidden_states[:-1]) + [seen["pre"]]
        return [s.to(dtype) for s in states], seen["post"].to(dtype)


def make_target(folder: Path) -> HFTarget:
    make_llama(folder, layers=CFG.layers, hidden=CFG.hidden, vocab=CFG.vocab)
    return HFTarget(folder)
