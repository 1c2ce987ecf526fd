"""Llamas whose neighbouring boundaries are as close as a real model's middle layers, and what a
serving engine's capture code records from them when it is right and when it is wrong.

A random-weight Llama changes its residual stream a lot in every layer (neighbouring boundaries
at mean cosine ~0.9); a real model's middle layers add small updates (0.96-0.98). `make_close_llama`
scales the output projections of attention and MLP (o_proj, down_proj) until the neighbours sit
there, and `capture` runs the model (bf16 by default, as an engine does) with hooks that record
every boundary and the states inside each layer that capture code takes by mistake.
"""

from __future__ import annotations

from pathlib import Path

import torch

from tests.helpers.tiny_llama import make_llama

HIDDEN, LAYERS, VOCAB = 64, 12, 256
#: o_proj / down_proj scale that puts neighbouring boundaries at mean cosine 0.96-0.98
BRANCH_SCALE = 0.08


def make_close_llama(folder: Path, *, seed: int = 0, layers: int = LAYERS, scale: float = BRANCH_SCALE) -> Path:
    return make_llama(folder, seed=seed, hidden=HIDDEN, layers=layers, vocab=VOCAB, branch_scale=scale)


def capture(folder: Path, ids: list[int], dtype=torch.bfloat16) -> dict:
    """Every state of one run of the model in `dtype`, as float32 [T, H] tensors:
    "bounds" [L + 1] (b = 0..L), "post" (the final norm's output), and per layer i:
    "normalized"[i] (input_layernorm's output), "mid"[i] (the residual after attention),
    "attn"[i], "mlp"[i] (the branch outputs, without the residual)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype).eval()
    L = model.config.num_hidden_layers
    got: dict = {"normalized": [None] * L, "mid": [None] * L, "attn": [None] * L, "mlp": [None] * L}
    hooks = []
    for i, layer in enumerate(model.model.layers):
        put = lambda key, i=i: lambda _m, _a, o: got[key].__setitem__(i, o[0] if o.dim() == 3 else o)  # noqa: E731
        hooks.append(layer.input_layernorm.register_forward_hook(put("normalized")))
        if hasattr(layer, "pre_feedforward_layernorm"):
            # Gemma's sandwich norms: each branch is added after its own post-norm; the residual after
            # attention is the input of pre_feedforward_layernorm
            hooks += [
                layer.pre_feedforward_layernorm.register_forward_hook(
                    lambda _m, a, _o, i=i: got["mid"].__setitem__(i, a[0][0])),
                layer.post_attention_layernorm.register_forward_hook(put("attn")),
                layer.post_feedforward_layernorm.register_forward_hook(put("mlp")),
            ]
        else:
            hooks += [
                layer.post_attention_layernorm.register_forward_hook(
                    lambda _m, a, _o, i=i: got["mid"].__setitem__(i, a[0][0])),
                layer.self_attn.register_forward_hook(lambda _m, _a, o, i=i: got["attn"].__setitem__(i, o[0][0])),
                layer.mlp.register_forward_hook(put("mlp")),
            ]
    seen = {}
    hooks.append(model.model.norm.register_forward_hook(lambda _m, a, o: seen.update(pre=a[0][0], post=o[0])))
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True, use_cache=False)
    for h in hooks:
        h.remove()
    bounds = [h[0] for h in out.hidden_states[:-1]] + [seen["pre"]]
    f = lambda t: t.detach().float().clone()
    return {"bounds": [f(b) for b in bounds], "post": f(seen["post"]),
            **{k: [f(t) for t in v] for k, v in got.items()}}


def lagged(state: torch.Tensor, shift: int) -> torch.Tensor:
    """Row t holds row t - shift (a capture `shift` tokens late; negative: early); the rows that
    have no source repeat the nearest one, as a slice that is off by some rows leaves them."""
    T = state.shape[0]
    idx = (torch.arange(T) - shift).clamp(0, T - 1)
    return state[idx]


def fp8_round_trip(x: torch.Tensor) -> torch.Tensor:
    """Per-tensor scaled e4m3, as FP8 KV/activation captures store them, back to float32."""
    scale = x.abs().max().clamp_min(1e-12) / 448.0
    return (x / scale).to(torch.float8_e4m3fn).float() * scale


def kernel_noise(x: torch.Tensor, seed: int, rel: float = 0.01) -> torch.Tensor:
    """1% of each row's RMS as Gaussian noise: another kernel's rounding, generously."""
    g = torch.Generator().manual_seed(seed)
    rms = x.norm(dim=-1, keepdim=True) / x.shape[-1] ** 0.5
    return x + torch.randn(x.shape, generator=g) * rms * rel


def prompt(seed: int, t: int = 48) -> list[int]:
    g = torch.Generator().manual_seed(2000 + seed)
    return torch.randint(1, VOCAB, (t,), generator=g).tolist()


def neighbour_cosines(bounds: list[torch.Tensor]) -> list[float]:
    """Mean cosine of each boundary with the next (the closeness a real model's layers have)."""
    cs = torch.nn.functional.cosine_similarity
    return [float(cs(a, b, dim=-1).mean()) for a, b in zip(bounds, bounds[1:])]
