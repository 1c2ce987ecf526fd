"""A tiny Llama saved with save_pretrained, and captures of its hidden states at known boundaries."""

from __future__ import annotations

from pathlib import Path

import torch

HIDDEN, LAYERS, VOCAB = 64, 8, 256  # 8 layers: the default capture {2, L//2, L-3} has 3 distinct boundaries


def make_llama(folder: Path, *, seed: int = 0, hidden: int = HIDDEN, layers: int = LAYERS,
               vocab: int = VOCAB, dtype: str = "float32", branch_scale: float = 1.0) -> Path:
    """Random weights, RMSNorm gains drawn in [0.5, 1.5] (so pre- and post-norm states differ in
    direction, not only in scale), saved as safetensors with config.json. `branch_scale` scales the
    output projections of attention and MLP (o_proj, down_proj): below 1, neighbouring boundaries
    come closer, as in a real model's middle layers."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        hidden_size=hidden, intermediate_size=2 * hidden + 44, num_hidden_layers=layers,
        num_attention_heads=4, num_key_value_heads=2, vocab_size=vocab, max_position_embeddings=2048,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(0.5 + torch.rand(p.shape, generator=g))
            elif p.dim() == 2:
                p.normal_(0, 1.0 / p.shape[1] ** 0.5, generator=g)
                if name.endswith(("o_proj.weight", "down_proj.weight")):
                    p.mul_(branch_scale)
            # embedding rows are large enough that the residual stream is not all updates
        model.model.embed_tokens.weight.mul_(2.0)
    model.to(getattr(torch, dtype))  # save_pretrained records the weights' dtype in config.json
    model.save_pretrained(folder, safe_serialization=True)
    return folder


def run_states(folder: Path, ids: list[int], dtype=torch.float32):
    """(boundaries [L+1] of [T, H], post-norm [T, H]) from output_hidden_states: b = k is
    hidden_states[k] for k < L, b = L is the final norm's input."""
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(folder, dtype=dtype).eval()
    seen = {}
    handle = model.model.norm.register_forward_hook(lambda _m, a, out: seen.update(pre=a[0], post=out))
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True, use_cache=False)
    handle.remove()
    hs = [h[0] for h in out.hidden_states]
    bounds = hs[:-1] + [seen["pre"][0]]
    return [b.clone() for b in bounds], seen["post"][0].clone()


def prompt(seed: int, t: int = 40, vocab: int = VOCAB) -> list[int]:
    g = torch.Generator().manual_seed(1000 + seed)
    return torch.randint(1, vocab, (t,), generator=g).tolist()
