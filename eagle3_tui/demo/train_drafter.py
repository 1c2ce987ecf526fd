"""Train a tiny EAGLE-3 drafter on hidden-state samples and save it in SpecForge's layout.

For demos and tests: a one-layer drafter of the target's width, trained for a few hundred Adam
steps with SpecForge's test-time-training (TTT) objective, on one core in seconds. Deterministic
for a given seed and data (torch's CPU kernels, one thread recommended).

    seqs = [TrainSeq(ids, loss_mask, aux), ...]          # aux: [T, k*H] (the k slots concatenated)
    weights = train_drafter(seqs, embed=target_embedding, head=target_lm_head, steps=300, seed=0)
    save_drafter("out/drafter", weights, aux_layer_ids=[1, 4, 6])

The forward below is the dense form of SpecForge's TTT unroll (specforge/algorithms/eagle3/model.py,
modeling/draft/llama3_eagle.py) with autograd: at step s, row t is fed token ids[t+1+s] and, from
step 1 on, its own previous output; its query attends causally to the step-0 keys and to its own
row's keys of steps 1..s. It predicts ids[t+2+s] where loss_mask[t+s] is 1. The engine that scores
drafters (engines/model/accept.py) is a separate, chunked, no-grad implementation of the same maths.

torch and stdlib only.
"""

from __future__ import annotations

import json
import math
import os
import random
import struct
from dataclasses import dataclass
from typing import Any, Callable

EPS = 1e-6
THETA = 10000.0


@dataclass
class TrainSeq:
    ids: Any  # int64 [T]
    loss_mask: Any  # [T], 1 where the token carries loss
    aux: Any  # float [T, k*H]: the k aux slots of the target, concatenated in fc's order


@dataclass(frozen=True)
class DrafterSizes:
    vocab: int
    hidden: int  # H (drafter width = target width here)
    k: int
    draft_vocab: int
    heads: int
    kv_heads: int
    head_dim: int
    mlp: int


def shape_for(vocab: int, hidden: int, k: int, draft_vocab: int, heads: int | None = None,
              kv_heads: int | None = None) -> DrafterSizes:
    """The drafter's sizes; heads and kv_heads: the target's (SpecForge's drafter config copies
    them, and an engine runs only the head sizes its kernels have: vLLM's CPU attention has no 16),
    else hidden / 16 heads."""
    heads = heads or max(1, hidden // 16)
    return DrafterSizes(vocab, hidden, k, draft_vocab, heads, kv_heads or max(1, heads // 2), hidden // heads, 3 * hidden)


def init_weights(s: DrafterSizes, g) -> dict:
    # lazy: torch: loaded when used, never at start-up
    import torch

    def n(*shape, std):
        return (torch.randn(*shape, generator=g) * std).requires_grad_()

    def ones(k):
        return torch.ones(k).requires_grad_()

    H, Hq, Hkv = s.hidden, s.heads * s.head_dim, s.kv_heads * s.head_dim
    return {
        "embed_tokens.weight": n(s.vocab, H, std=1.0),
        "fc.weight": n(H, s.k * H, std=1 / math.sqrt(s.k * H)),
        "midlayer.input_layernorm.weight": ones(H),
        "midlayer.hidden_norm.weight": ones(H),
        "midlayer.self_attn.q_proj.weight": n(Hq, 2 * H, std=1 / math.sqrt(2 * H)),
        "midlayer.self_attn.k_proj.weight": n(Hkv, 2 * H, std=1 / math.sqrt(2 * H)),
        "midlayer.self_attn.v_proj.weight": n(Hkv, 2 * H, std=1 / math.sqrt(2 * H)),
        "midlayer.self_attn.o_proj.weight": n(H, Hq, std=1 / math.sqrt(H)),
        "midlayer.post_attention_layernorm.weight": ones(H),
        "midlayer.mlp.gate_proj.weight": n(s.mlp, H, std=1 / math.sqrt(H)),
        "midlayer.mlp.up_proj.weight": n(s.mlp, H, std=1 / math.sqrt(H)),
        "midlayer.mlp.down_proj.weight": n(H, s.mlp, std=1 / math.sqrt(s.mlp)),
        "norm.weight": ones(H),
        "lm_head.weight": n(s.draft_vocab, H, std=1 / math.sqrt(H)),
    }


def _rms(x, w):
    # lazy: torch: loaded when used, never at start-up
    import torch

    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def _rope(x, pos, head_dim: int):
    # lazy: torch: loaded when used, never at start-up
    import torch

    inv = 1.0 / (THETA ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    ang = torch.outer(pos.float(), inv)
    cos, sin = torch.cat((ang, ang), -1).cos(), torch.cat((ang, ang), -1).sin()
    x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2 :]
    return x * cos + torch.cat((-x2, x1), -1) * sin


def ttt_logits(w: dict, s: DrafterSizes, aux, ids, steps: int) -> list:
    """Draft-vocab logits [T, draft_vocab] per TTT step for one sequence (dense, with autograd)."""
    # lazy: torch: loaded when used, never at start-up
    import torch
    from torch.nn import functional as F

    T = aux.shape[0]
    h = aux @ w["fc.weight"].T
    keys, vals, out = [], [], []
    for step in range(steps):
        tok = torch.zeros(T, dtype=torch.int64)
        if 1 + step < T:
            tok[: T - 1 - step] = ids[1 + step :]
        x = torch.cat((_rms(w["embed_tokens.weight"][tok], w["midlayer.input_layernorm.weight"]),
                       _rms(h, w["midlayer.hidden_norm.weight"])), -1)
        q = (x @ w["midlayer.self_attn.q_proj.weight"].T).view(T, s.heads, s.head_dim).transpose(0, 1)
        k = (x @ w["midlayer.self_attn.k_proj.weight"].T).view(T, s.kv_heads, s.head_dim).transpose(0, 1)
        v = (x @ w["midlayer.self_attn.v_proj.weight"].T).view(T, s.kv_heads, s.head_dim).transpose(0, 1)
        pos = torch.arange(T) + step
        q, k = _rope(q, pos, s.head_dim), _rope(k, pos, s.head_dim)
        rep = s.heads // s.kv_heads
        keys.append(k.repeat_interleave(rep, 0))
        vals.append(v.repeat_interleave(rep, 0))
        K, V = torch.cat(keys, dim=1), torch.cat(vals, dim=1)
        mask = torch.cat([torch.ones(T, T).tril().bool()] + [torch.eye(T, dtype=torch.bool)] * step, dim=1)
        scores = ((q @ K.transpose(1, 2)) / math.sqrt(s.head_dim)).masked_fill(~mask, float("-inf"))
        a = (scores.softmax(-1) @ V).transpose(0, 1).reshape(T, s.heads * s.head_dim)
        h = h + a @ w["midlayer.self_attn.o_proj.weight"].T
        m = _rms(h, w["midlayer.post_attention_layernorm.weight"])
        h = h + (F.silu(m @ w["midlayer.mlp.gate_proj.weight"].T) * (m @ w["midlayer.mlp.up_proj.weight"].T)) \
            @ w["midlayer.mlp.down_proj.weight"].T
        out.append(_rms(h, w["norm.weight"]) @ w["lm_head.weight"].T)
    return out


class Adam:
    """torch.optim.Adam's update (default betas and eps, no weight decay), in a few lines:
    constructing torch.optim.Adam imports torch's compiler stack, seconds of the demo's time."""

    def __init__(self, params: list, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        # lazy: torch: loaded when used, never at start-up
        import torch

        self.params, self.lr, self.betas, self.eps, self.t = params, lr, betas, eps, 0
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        # lazy: torch: loaded when used, never at start-up
        import torch

        b1, b2 = self.betas
        self.t += 1
        c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        with torch.no_grad():
            for p, m, v in zip(self.params, self.m, self.v, strict=True):
                if p.grad is None:
                    continue
                m.lerp_(p.grad, 1 - b1)
                v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                p.addcdiv_(m, (v.sqrt() / math.sqrt(c2)).add_(self.eps), value=-self.lr / c1)


def train_drafter(seqs: list[TrainSeq], *, embed, head=None, draft_vocab: int | None = None, steps: int = 300,
                  ttt: int = 2, seed: int = 0, lr: float = 4e-3, heads: int | None = None,
                  kv_heads: int | None = None, progress: Callable[[int], None] | None = None) -> dict:
    """Weights (SpecForge names, float32, d2t/t2d included) of a drafter trained on `seqs`.

    embed: the target's input embedding [V, H] (copied and frozen, as SpecForge does);
    head: the target's LM head [V, H] to start lm_head from (None: random);
    draft_vocab: size of the draft vocabulary (the most frequent ids; default min(V, 320));
    heads, kv_heads: the attention's (shape_for; save_drafter must be given the same);
    ttt: the TTT steps trained, each fed the previous one's output (a drafter scores near zero at
    a step past them: train as many as it will draft);
    progress: called with the Adam steps done, every 25 and at the end.
    """
    # lazy: torch: loaded when used, never at start-up
    import torch
    from torch.nn import functional as F

    if not seqs:
        raise ValueError("train_drafter needs at least one sequence")
    vocab, hidden = embed.shape
    width = seqs[0].aux.shape[1]
    if width % hidden:
        raise ValueError(f"aux width {width} is not a multiple of the embedding width {hidden}")
    draft_vocab = min(vocab, draft_vocab or 320)
    s = shape_for(vocab, hidden, width // hidden, draft_vocab, heads, kv_heads)
    g = torch.Generator().manual_seed(seed)
    counts = torch.bincount(torch.cat([q.ids.to(torch.int64) for q in seqs]), minlength=vocab)
    keep = torch.sort(torch.argsort(counts, descending=True, stable=True)[:draft_vocab]).values
    t2d = torch.zeros(vocab, dtype=torch.bool)
    t2d[keep] = True
    d2t = keep - torch.arange(draft_vocab)  # SpecForge's offsets: target id = draft id + d2t
    to_draft = torch.full((vocab,), -100, dtype=torch.int64)
    to_draft[keep] = torch.arange(draft_vocab)
    w = init_weights(s, g)
    with torch.no_grad():
        w["embed_tokens.weight"].copy_(embed.float())
        if head is not None:
            h = head.float()[keep]
            w["lm_head.weight"].copy_(h / h.norm(dim=-1, keepdim=True).mean())
    w["embed_tokens.weight"].requires_grad_(False)
    opt = Adam([p for p in w.values() if p.requires_grad], lr=lr)
    rng = random.Random(seed)
    for done in range(steps):
        if progress is not None and done % 25 == 0:
            progress(done)
        seq = seqs[rng.randrange(len(seqs))]
        ids = seq.ids.to(torch.int64)
        mask = seq.loss_mask
        logits = ttt_logits(w, s, seq.aux.float(), ids, ttt)
        T = ids.shape[0]
        loss = torch.zeros(())
        for step, lg in enumerate(logits):
            tgt = torch.full((T,), -100, dtype=torch.int64)
            if 2 + step < T:
                tgt[: T - 2 - step] = to_draft[ids[2 + step :]]
                tgt[: T - step][mask[step:] == 0] = -100  # SpecForge shifts the loss mask each step
            loss = loss + (0.8 ** step) * F.cross_entropy(lg, tgt, ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if progress is not None:
        progress(steps)
    weights = {k: v.detach().clone() for k, v in w.items()}
    weights["d2t"] = d2t
    weights["t2d"] = t2d
    return weights


def drafter_config(weights: dict, *, aux_layer_ids: list[int] | None = None, heads: int | None = None,
                   kv_heads: int | None = None) -> dict:
    """config.json as SpecForge writes it for LlamaForCausalLMEagle3, read off the weights (and the
    heads they were trained with, which the weights' shapes do not tell)."""
    vocab, hidden = weights["embed_tokens.weight"].shape
    k = weights["fc.weight"].shape[1] // hidden
    s = shape_for(vocab, hidden, k, weights["lm_head.weight"].shape[0], heads, kv_heads)
    cfg = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": hidden,
        "intermediate_size": s.mlp,
        "num_attention_heads": s.heads,
        "num_key_value_heads": s.kv_heads,
        "head_dim": s.head_dim,
        "num_hidden_layers": 1,
        "hidden_act": "silu",
        "rms_norm_eps": EPS,
        "rope_theta": THETA,
        "max_position_embeddings": 2048,
        "vocab_size": vocab,
        "draft_vocab_size": s.draft_vocab,
        "target_hidden_size": hidden,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
    }
    if aux_layer_ids is not None:
        cfg["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": list(aux_layer_ids)}
    return cfg


_ST = {"float32": "F32", "bfloat16": "BF16", "float16": "F16", "int64": "I64", "bool": "BOOL"}


def write_safetensors(tensors: dict, path: str) -> None:
    """The safetensors format written by hand (bool included, as SpecForge's t2d needs)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous()
        data = t.view(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": _ST[str(t.dtype).removeprefix("torch.")], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def save_drafter(folder: str, weights: dict, *, config: dict | None = None,
                 aux_layer_ids: list[int] | None = None, heads: int | None = None, kv_heads: int | None = None) -> str:
    """Write config.json and model.safetensors (SpecForge's layout) into `folder`; returns it."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(config or drafter_config(weights, aux_layer_ids=aux_layer_ids, heads=heads, kv_heads=kv_heads), fh)
    write_safetensors(weights, os.path.join(folder, "model.safetensors"))
    return folder
