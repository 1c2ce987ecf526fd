"""The multi-layer EAGLE-3 drafter as the engines run it, transcribed from their released code
and unrolled the way training runs it (test-time training, tests/helpers/drafter.py's
reference_logits: dense masked scores, no caching), as the reference accept is checked against
for the shapes SpecForge does not build:

- sglang 0.5.23, sglang/srt/models/llama_eagle3.py: `input_norm` over the concatenated aux
  states when norm_before_fc (239-240), then `fc_norm` per chunk (241-246), fc (247); layer 0
  (97-102): residual = h, x = [input_layernorm(embeds), hidden_norm(h)]; a later layer
  (103-105): h, residual = hidden_norm(h, residual) (SGLang's fused add: residual += h, then the
  norm of it); after attention post_attention_layernorm(h, residual) and the MLP (114-119); the
  final norm(h, residual) gives the logits' input and, unless norm_output, the pre-norm state the
  next step gets (263-269).
- vllm 0.34.0, vllm/model_executor/models/llama_eagle3.py: the same, but a later layer uses
  input_layernorm (136-138), and norm_before_residual sets layer 0's residual to hidden_norm(h)
  (101-104, 110-115); speculators 0.9.0 trains that (models/eagle3/model_definitions.py 80-81).

Weights are in the published names (`layers.i.*`, `fc`, `fc_norm.i`, `input_norm`, `norm`,
`lm_head`, `embed_tokens`, `d2t`).
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F

from tests.helpers.drafter import HEAD_DIM, HEADS, KV_HEADS, rms, rope


def _fused(x, residual, w):
    """SGLang/vLLM RMSNorm(x, residual): residual += x, then the norm of it."""
    r = x + residual
    return rms(r, w), r


def engine_logits(w: dict, aux: torch.Tensor, ids: torch.Tensor, steps: int, *, layers: int, k: int,
                  fc_norm: bool = False, norm_before_fc: bool = False, feed_normed: bool = False,
                  later_norm: str = "hidden_norm", norm_before_residual: bool = False) -> list[torch.Tensor]:
    """Draft-vocab logits [T, draft_vocab] per step for one sequence; aux [T, k*Ht], ids [T]."""
    T = aux.shape[0]
    x = aux.float()
    if norm_before_fc:
        x = rms(x, w["input_norm.weight"])
    if fc_norm:
        x = torch.cat([rms(c, w[f"fc_norm.{i}.weight"]) for i, c in enumerate(x.chunk(k, -1))], -1)
    h = x @ w["fc.weight"].T
    keys: list[list] = [[] for _ in range(layers)]
    vals: list[list] = [[] for _ in range(layers)]
    out = []
    for s in range(steps):
        tok = torch.zeros(T, dtype=torch.int64)
        if 1 + s < T:
            tok[: T - 1 - s] = ids[1 + s :]
        emb = w["embed_tokens.weight"][tok]
        hidden, residual = h, None
        for i in range(layers):
            p = f"layers.{i}."
            if i == 0:
                residual = hidden
                normed = rms(hidden, w[p + "hidden_norm.weight"])
                if norm_before_residual:
                    residual = normed
                xin = torch.cat((rms(emb, w[p + "input_layernorm.weight"]), normed), -1)
            else:
                xin, residual = _fused(hidden, residual, w[p + later_norm + ".weight"])
            a = _attention(w, p, xin, s, keys[i], vals[i])
            m, residual = _fused(a @ w[p + "self_attn.o_proj.weight"].T, residual,
                                 w[p + "post_attention_layernorm.weight"])
            hidden = (F.silu(m @ w[p + "mlp.gate_proj.weight"].T) * (m @ w[p + "mlp.up_proj.weight"].T)) \
                @ w[p + "mlp.down_proj.weight"].T
        to_logits, prenorm = _fused(hidden, residual, w["norm.weight"])
        out.append(to_logits @ w["lm_head.weight"].T)
        h = to_logits if feed_normed else prenorm
    return out


def _attention(w, p, x, s, keys, vals):
    T = x.shape[0]
    q = (x @ w[p + "self_attn.q_proj.weight"].T).view(T, HEADS, HEAD_DIM).transpose(0, 1)
    k = (x @ w[p + "self_attn.k_proj.weight"].T).view(T, KV_HEADS, HEAD_DIM).transpose(0, 1)
    v = (x @ w[p + "self_attn.v_proj.weight"].T).view(T, KV_HEADS, HEAD_DIM).transpose(0, 1)
    pos = torch.arange(T) + s
    q, k = rope(q, pos), rope(k, pos)
    rep = HEADS // KV_HEADS
    keys.append(k.repeat_interleave(rep, 0))
    vals.append(v.repeat_interleave(rep, 0))
    K, V = torch.cat(keys, dim=1), torch.cat(vals, dim=1)
    mask = torch.cat([torch.ones(T, T).tril().bool()] + [torch.eye(T, dtype=torch.bool)] * s, dim=1)
    scores = ((q @ K.transpose(1, 2)) / math.sqrt(HEAD_DIM)).masked_fill(~mask, float("-inf"))
    return (scores.softmax(-1) @ V).transpose(0, 1).reshape(T, HEADS * HEAD_DIM)


def step_hits(logits: list[torch.Tensor], d2t: torch.Tensor, ids: torch.Tensor, loss_mask: torch.Tensor,
              ) -> list[tuple[int, int]]:
    """(hits, rows) per step by docs/accept.md's rule: row t at step s guesses ids[t+2+s], counted
    where loss_mask[t+s] and the token lies inside the sample."""
    T = ids.shape[0]
    out = []
    for s, lg in enumerate(logits):
        draft = lg.argmax(-1)
        draft = draft + d2t[draft]
        t = torch.arange(T)
        inside = t + 2 + s < T
        counted = inside.clone()
        counted[: T - s] &= loss_mask[s:].bool()
        counted[T - s :] = False
        target = ids[(t + 2 + s).clamp(max=T - 1)]
        out.append((int(((draft == target) & counted).sum()), int(counted.sum())))
    return out
