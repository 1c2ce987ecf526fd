"""A small decoder-only transformer whose hidden states look like a real target model's.

Used to make the demo dataset and test data: embeddings, pre-norm residual blocks (RMSNorm with
non-trivial gains, causal attention with rotary positions, SwiGLU MLP), a final norm. Weights are
seeded and rounded to bf16-representable values, so a float32 run and a bf16 run of the same
model differ only by activation precision, as a float32 training dump and a bf16 engine do.
Later blocks write larger updates, and layer 1's MLP writes a value in the hundreds into one
channel on the first token (<|im_start|> / BOS) and a few delimiter-like tokens ("massive
activations"), so residual norms grow with depth and vary per token like a real model's.

It is a Llama: demo/hf_folder.py saves it as a LlamaForCausalLM folder that `transformers` loads
and that reproduces its float32 states (every quirk is in the weights, none added to the states).

torch and stdlib only, as engines/ (shipped to the remote box).
"""

from __future__ import annotations

import copy
import math
import weakref
from dataclasses import dataclass
from typing import cast

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class TinyDecoderConfig:
    vocab: int = 1000
    hidden: int = 64
    layers: int = 10
    heads: int = 4
    mlp: int = 172
    seed: int = 0

    @property
    def aux_boundaries(self) -> tuple[int, int, int]:
        """The common EAGLE-3 default capture: b = {2, L//2, L-3}."""
        return (2, self.layers // 2, self.layers - 3)


#: the massive neuron of layer 1 (see TinyDecoder._install_massive): gate and up weights on the
#: marker channel, and its down weight on the massive channel
MASSIVE_GATE = 6.0
MASSIVE_OUT = 6.0


class RMSNorm(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # statistics in float32 as real kernels do; result back in the activation dtype
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight.float()).to(x.dtype)


def _rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class Block(nn.Module):
    def __init__(self, cfg: TinyDecoderConfig):
        super().__init__()
        h = cfg.hidden
        self.heads = cfg.heads
        self.attn_norm = RMSNorm(h)
        self.qkv = nn.Linear(h, 3 * h, bias=False)
        self.out = nn.Linear(h, h, bias=False)
        self.mlp_norm = RMSNorm(h)
        self.gate_up = nn.Linear(h, 2 * cfg.mlp, bias=False)
        self.down = nn.Linear(cfg.mlp, h, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        bsz, t, h = x.shape
        q, k, v = self.qkv(self.attn_norm(x)).split(h, dim=-1)
        shape = (bsz, t, self.heads, h // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        q, k = _rotary(q, cos, sin), _rotary(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(a.transpose(1, 2).reshape(bsz, t, h))
        gate, up = self.gate_up(self.mlp_norm(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


class TinyDecoder(nn.Module):
    def __init__(self, cfg: TinyDecoderConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.hidden)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.final_norm = RMSNorm(cfg.hidden)
        #: the LM head [V, H]; None: tied to the embeddings (fit_lm_head gives the demo its own)
        self.lm_head: torch.Tensor | None = None
        self._init_weights()

    def block(self, i: int) -> Block:
        """Decoder layer i, typed (an nn.ModuleList hands out bare Modules)."""
        return cast(Block, self.blocks[i])

    @torch.no_grad()
    def _init_weights(self) -> None:
        cfg = self.cfg
        g = torch.Generator().manual_seed(cfg.seed)
        h = cfg.hidden

        def normal(*shape: int, std: float) -> torch.Tensor:
            return torch.randn(*shape, generator=g) * std

        def gains() -> torch.Tensor:
            # log-normal spread plus a few strong channels: the norm visibly reshapes directions
            w = torch.exp(normal(h, std=0.25))
            w[torch.randperm(h, generator=g)[:3]] *= 2.5
            return w

        self.embed.weight.copy_(normal(cfg.vocab, h, std=0.6))
        for i in range(len(self.blocks)):
            blk = self.block(i)
            depth_gain = 1.0 + 0.35 * i  # later layers write bigger updates
            blk.attn_norm.weight.copy_(gains())
            blk.mlp_norm.weight.copy_(gains())
            blk.qkv.weight.copy_(normal(3 * h, h, std=0.7 / math.sqrt(h)))
            blk.out.weight.copy_(normal(h, h, std=depth_gain / math.sqrt(h)))
            blk.gate_up.weight.copy_(normal(2 * cfg.mlp, h, std=1.0 / math.sqrt(h)))
            blk.down.weight.copy_(normal(h, cfg.mlp, std=1.2 * depth_gain / math.sqrt(cfg.mlp)))
        self.final_norm.weight.copy_(gains())
        self._install_massive(g)
        for p in self.parameters():  # exactly representable in bf16: only activations differ
            p.copy_(p.bfloat16().float())

    @torch.no_grad()
    def _install_massive(self, g: torch.Generator) -> None:
        """"Massive activations", in the weights as a real model has them: one channel (CHAN) gets
        a value in the hundreds on the first token (<|im_start|> / BOS, id 1) and on a few
        delimiter-like tokens, written by one neuron of layer 1's MLP. Their embeddings carry a
        marker in another channel (MARK) that layers 0 and 1 never write, so the neuron reads it
        cleanly: silu(G m) * U m with m = 0 (no output at all) on every other token. Pre-norm norms
        then vary a lot per token; after the final norm (gain 1 on CHAN) they do not."""
        cfg, h = self.cfg, self.cfg.hidden
        chan, mark = (int(c) for c in torch.randperm(h, generator=g)[:2])
        marked = torch.randperm(cfg.vocab - 1, generator=g)[: max(1, cfg.vocab // 30)] + 1
        strength = 1.0 + 0.25 * torch.rand(len(marked), generator=g)
        self.embed.weight[:, mark] = 0.0
        self.embed.weight[marked, mark] = strength
        self.embed.weight[1, mark] = 1.5  # the first token of every prompt: the strongest marker
        for blk in (self.block(0), self.block(1)):  # nothing writes MARK before layer 1's MLP reads it
            blk.out.weight[mark] = 0.0
        self.block(0).down.weight[mark] = 0.0
        blk = self.block(1)
        n = cfg.mlp - 1  # the massive neuron: gate and up read MARK only, down writes CHAN only
        blk.mlp_norm.weight[mark] = 1.0
        blk.gate_up.weight[n] = 0.0
        blk.gate_up.weight[n, mark] = MASSIVE_GATE
        blk.gate_up.weight[cfg.mlp + n] = 0.0
        blk.gate_up.weight[cfg.mlp + n, mark] = MASSIVE_GATE
        blk.down.weight[:, n] = 0.0
        blk.down.weight[chan, n] = MASSIVE_OUT
        self.final_norm.weight[chan] = 1.0
        self.massive_channel, self.marker_channel = chan, mark

    def rotary_tables(self, t: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        d = self.cfg.hidden // self.cfg.heads
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
        ang = torch.outer(torch.arange(t, dtype=torch.float32), inv)
        return ang.cos().to(dtype), ang.sin().to(dtype)

    @torch.no_grad()
    def boundaries(self, ids: torch.Tensor, dtype: torch.dtype = torch.float32):
        """Run on ids [T] or [B, T]. Returns (states, final): states is a list of L+1 tensors
        [..., T, H] with states[b] = boundary b (0 = embeddings, i+1 = output of layer i, L = last
        residual before the final norm), final = the post-norm final state. All in `dtype`."""
        squeeze = ids.dim() == 1
        ids2 = ids.unsqueeze(0) if squeeze else ids
        model = self if dtype == torch.float32 else _cast(self, dtype)
        x = model.embed(ids2).to(dtype)
        cos, sin = model.rotary_tables(ids2.shape[1], dtype)
        states = [x]
        for blk in model.blocks:
            x = blk(x, cos, sin)
            states.append(x)
        final = model.final_norm(x)
        if squeeze:
            states = [s[0] for s in states]
            final = final[0]
        return states, final


    def head(self) -> torch.Tensor:
        """The LM head's weight [V, H]: its own when fitted, else the tied embeddings."""
        return self.embed.weight if self.lm_head is None else self.lm_head


_CASTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> {dtype: copy}


def _cast(model: TinyDecoder, dtype: torch.dtype) -> TinyDecoder:
    per_model = _CASTS.setdefault(model, {})
    if dtype not in per_model:
        per_model[dtype] = copy.deepcopy(model).to(dtype)
    return per_model[dtype]


def build_model(cfg: TinyDecoderConfig | None = None, **overrides) -> TinyDecoder:
    """A seeded TinyDecoder; `build_model(seed=3, hidden=32)` overrides config fields."""
    cfg = cfg or TinyDecoderConfig()
    if overrides:
        cfg = TinyDecoderConfig(**{**cfg.__dict__, **overrides})
    return TinyDecoder(cfg).eval()


def fit_lm_head(model: TinyDecoder, finals: torch.Tensor, targets: torch.Tensor, *, steps: int = 20) -> None:
    """Give `model` an LM head (untied) that predicts `targets` [N] from post-norm `finals` [N, H],
    as if the model had been trained on that text: its greedy tokens, and the targets SpecForge
    takes from it (`accept --model`), then follow the text. Over the tokens that occur as targets
    (the others keep a zero row): a linear discriminant start, a few Adam steps of cross-entropy
    (about 85% top-1 on the demo's training text, in a fraction of a second); bf16-representable."""
    finals = finals.float()
    tokens, cls = torch.unique(targets.long(), return_inverse=True)
    count = torch.bincount(cls).float()[:, None]
    means = torch.zeros(len(tokens), finals.shape[1]).index_add_(0, cls, finals) / count
    cov = torch.cov(finals.T) + 1e-3 * torch.eye(finals.shape[1])
    w = (0.1 * torch.linalg.solve(cov, means.T).T).requires_grad_(True)
    opt = torch.optim.Adam([w], lr=0.4)
    with torch.enable_grad():
        for _ in range(steps):
            loss = F.cross_entropy(finals @ w.T, cls)
            opt.zero_grad()
            loss.backward()
            opt.step()
    head = torch.zeros(model.cfg.vocab, finals.shape[1])
    head[tokens] = w.detach()
    model.lm_head = head.bfloat16().float()


def run_model(model: TinyDecoder, ids: torch.Tensor, dtype: torch.dtype = torch.float32):
    """All boundary hidden states b = 0..L and the post-norm final state, see boundaries()."""
    return model.boundaries(ids, dtype)
