"""A tiny EAGLE-3 drafter in SpecForge's layout, trained here on the demo transformer's states.

`reference_logits` is the straightforward dense version of SpecForge's test-time-training
forward (specforge/algorithms/eagle3/model.py, llama3_eagle.py): every step's attention is one
full score matrix over [step-0 keys | keys of steps 1..s] with an explicit mask (causal on the
first block, the diagonal on the others), no caching, no chunking. It trains the drafter and is
the reference the engine (eagle3_tui/engines/model/accept.py) is checked against.
"""

from __future__ import annotations

import json
import math
import os
import random
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from eagle3_tui.demo.prompt import ASSISTANT, BOS, EOS, FIRST_WORD, SYSTEM, USER
from eagle3_tui.demo.model import build_model
from eagle3_tui.demo.train_drafter import write_safetensors

AUX = (2, 5, 7)  # the demo model's EAGLE-3 boundaries (L = 10)
VOCAB, H = 1000, 64
DRAFT_VOCAB = 320
HEADS, KV_HEADS, HEAD_DIM, MLP = 4, 2, 16, 192
EPS = 1e-6
THETA = 10000.0


def config(draft_vocab: int = DRAFT_VOCAB) -> dict:
    """config.json as SpecForge writes it for LlamaForCausalLMEagle3."""
    return {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": H,
        "intermediate_size": MLP,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "num_hidden_layers": 1,
        "hidden_act": "silu",
        "rms_norm_eps": EPS,
        "rope_theta": THETA,
        "max_position_embeddings": 2048,
        "vocab_size": VOCAB,
        "draft_vocab_size": draft_vocab,
        "target_hidden_size": H,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 4, 6]},
    }


def init_weights(g: torch.Generator, draft_vocab: int = DRAFT_VOCAB) -> dict[str, torch.Tensor]:
    def n(*shape, std):
        return (torch.randn(*shape, generator=g) * std).requires_grad_()

    def ones(k):
        return torch.ones(k).requires_grad_()

    return {
        "embed_tokens.weight": n(VOCAB, H, std=1.0),
        "fc.weight": n(H, 3 * H, std=1 / math.sqrt(3 * H)),
        "midlayer.input_layernorm.weight": ones(H),
        "midlayer.hidden_norm.weight": ones(H),
        "midlayer.self_attn.q_proj.weight": n(HEADS * HEAD_DIM, 2 * H, std=1 / math.sqrt(2 * H)),
        "midlayer.self_attn.k_proj.weight": n(KV_HEADS * HEAD_DIM, 2 * H, std=1 / math.sqrt(2 * H)),
        "midlayer.self_attn.v_proj.weight": n(KV_HEADS * HEAD_DIM, 2 * H, std=1 / math.sqrt(2 * H)),
        "midlayer.self_attn.o_proj.weight": n(H, HEADS * HEAD_DIM, std=1 / math.sqrt(H)),
        "midlayer.post_attention_layernorm.weight": ones(H),
        "midlayer.mlp.gate_proj.weight": n(MLP, H, std=1 / math.sqrt(H)),
        "midlayer.mlp.up_proj.weight": n(MLP, H, std=1 / math.sqrt(H)),
        "midlayer.mlp.down_proj.weight": n(H, MLP, std=1 / math.sqrt(MLP)),
        "norm.weight": ones(H),
        "lm_head.weight": n(draft_vocab, H, std=1 / math.sqrt(H)),
    }


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def rope(x, pos):
    inv = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM))
    ang = torch.outer(pos.float(), inv)
    cos, sin = torch.cat((ang, ang), -1).cos(), torch.cat((ang, ang), -1).sin()
    x1, x2 = x[..., : HEAD_DIM // 2], x[..., HEAD_DIM // 2 :]
    return x * cos + torch.cat((-x2, x1), -1) * sin


def reference_logits(w: dict, aux: torch.Tensor, ids: torch.Tensor, steps: int) -> list[torch.Tensor]:
    """Draft-vocab logits [T, draft_vocab] per step for one sequence; aux [T, 3H], ids [T].

    Step s feeds ids[t+1+s] (0 past the end) and, from step 1 on, the previous step's output.
    """
    T = aux.shape[0]
    h = aux @ w["fc.weight"].T
    keys, vals, out = [], [], []
    for s in range(steps):
        tok = torch.zeros(T, dtype=torch.int64)
        if 1 + s < T:
            tok[: T - 1 - s] = ids[1 + s :]
        x = torch.cat((rms(w["embed_tokens.weight"][tok], w["midlayer.input_layernorm.weight"]),
                       rms(h, w["midlayer.hidden_norm.weight"])), -1)
        q = (x @ w["midlayer.self_attn.q_proj.weight"].T).view(T, HEADS, HEAD_DIM).transpose(0, 1)
        k = (x @ w["midlayer.self_attn.k_proj.weight"].T).view(T, KV_HEADS, HEAD_DIM).transpose(0, 1)
        v = (x @ w["midlayer.self_attn.v_proj.weight"].T).view(T, KV_HEADS, HEAD_DIM).transpose(0, 1)
        pos = torch.arange(T) + s
        q, k = rope(q, pos), rope(k, pos)
        rep = HEADS // KV_HEADS
        keys.append(k.repeat_interleave(rep, 0))
        vals.append(v.repeat_interleave(rep, 0))
        K = torch.cat(keys, dim=1)  # [heads, (s+1)T, hd]
        V = torch.cat(vals, dim=1)
        allowed = [torch.ones(T, T).tril().bool()] + [torch.eye(T, dtype=torch.bool)] * s
        mask = torch.cat(allowed, dim=1)
        scores = (q @ K.transpose(1, 2)) / math.sqrt(HEAD_DIM)
        scores = scores.masked_fill(~mask, float("-inf"))
        a = (scores.softmax(-1) @ V).transpose(0, 1).reshape(T, HEADS * HEAD_DIM)
        h = h + a @ w["midlayer.self_attn.o_proj.weight"].T
        m = rms(h, w["midlayer.post_attention_layernorm.weight"])
        h = h + (F.silu(m @ w["midlayer.mlp.gate_proj.weight"].T) * (m @ w["midlayer.mlp.up_proj.weight"].T)) \
            @ w["midlayer.mlp.down_proj.weight"].T
        out.append(rms(h, w["norm.weight"]) @ w["lm_head.weight"].T)
    return out


_r = random.Random(1234)
WORDS = sorted(_r.sample(range(FIRST_WORD, VOCAB), 48))  # the response vocabulary
RULE = {}  # word -> the word two positions later (a fixed skip-bigram, covering every word)
for _w, _n in zip(WORDS, _r.sample(WORDS, len(WORDS))):
    RULE[_w] = _n
# EOS and the template's last tokens may stand two places before a response word
for _w in (*ASSISTANT, EOS):
    RULE.setdefault(_w, WORDS[0])


@dataclass
class Seq:
    ids: torch.Tensor  # [T]
    loss_mask: torch.Tensor  # [T]
    states: list  # boundary states, float32, [T, H] each
    final: torch.Tensor  # post-norm [T, H]
    targets: torch.Tensor  # [T]: targets[j] = the model's greedy choice for position j (j >= 1)


class World:
    """The demo model, its greedy texts, and their hidden states."""

    def __init__(self, seed: int = 0):
        self.model = build_model(seed=seed)
        self.head = self.model.embed.weight.detach()  # the demo model's LM head is its embedding

    def run(self, ids: list[int], dtype=torch.float32):
        return self.model.boundaries(torch.tensor(ids), dtype)

    def targets(self, final: torch.Tensor) -> torch.Tensor:
        t = torch.zeros(final.shape[0], dtype=torch.int64)
        t[1:] = (final[:-1].float() @ self.head.T).argmax(-1)
        return t

    def greedy_seq(self, rng: random.Random, user: int, response: int) -> Seq:
        """A chat-like prompt, then the model's own greedy response (the target's text)."""
        ids = [BOS, *SYSTEM, *USER] + [rng.randrange(FIRST_WORD, VOCAB) for _ in range(user)] + ASSISTANT
        start = len(ids)
        for _ in range(response):
            _, fin = self.run(ids)
            ids.append(int((fin[-1] @ self.head.T).argmax()))
        ids.append(EOS)
        states, final = self.run(ids)
        mask = torch.zeros(len(ids), dtype=torch.int64)
        mask[start:] = 1
        return Seq(torch.tensor(ids), mask, states, final, self.targets(final))

    def rule_seq(self, rng: random.Random, user: int, response: int) -> Seq:
        """A prompt of random words, then a response whose token t+2 follows from token t (RULE,
        with probability 0.8; else a random response word): what comes next lives in the hidden
        state of an earlier token, as in real text, so a drafter must read its aux slots."""
        ids = [BOS, *SYSTEM, *USER] + [rng.randrange(FIRST_WORD, VOCAB) for _ in range(user)] + ASSISTANT
        start = len(ids)
        ids += [rng.choice(WORDS), rng.choice(WORDS)]
        while len(ids) < start + response:
            ids.append(RULE[ids[-2]] if rng.random() < 0.8 else rng.choice(WORDS))
        ids.append(EOS)
        states, final = self.run(ids)
        mask = torch.zeros(len(ids), dtype=torch.int64)
        mask[start:] = 1
        return Seq(torch.tensor(ids), mask, states, final, self.targets(final))

    def random_seq(self, rng: random.Random, n: int) -> Seq:
        ids = [BOS] + [rng.randrange(FIRST_WORD, VOCAB) for _ in range(n - 1)]
        states, final = self.run(ids)
        return Seq(torch.tensor(ids), torch.ones(n, dtype=torch.int64), states, final, self.targets(final))


def aux_of(seq: Seq, boundaries=AUX) -> torch.Tensor:
    return torch.cat([seq.states[b] for b in boundaries], -1)


def train(world: World, seqs: list[Seq], steps: int = 300, ttt: int = 2, seed: int = 0, lr: float = 4e-3):
    """Train with TTT on the sequences' own next tokens under their loss masks (the package's
    trainer, eagle3_tui/demo/train_drafter.py: the demo ships a drafter made by it)."""
    from eagle3_tui.demo.train_drafter import TrainSeq, train_drafter

    return train_drafter([TrainSeq(s.ids, s.loss_mask, aux_of(s)) for s in seqs], embed=world.model.embed.weight.detach(),
                         head=world.head, draft_vocab=DRAFT_VOCAB, steps=steps, ttt=ttt, seed=seed, lr=lr)


def save_drafter(folder: str, weights: dict, *, cfg: dict | None = None, drop=(), rename=None,
                 fmt: str = "safetensors") -> str:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(cfg or config(), fh)
    out = {}
    for k, v in weights.items():
        if k in drop:
            continue
        out[(rename or (lambda x: x))(k)] = v.contiguous()
    if fmt == "safetensors":
        write_safetensors(out, os.path.join(folder, "model.safetensors"))
    else:
        torch.save(out, os.path.join(folder, "pytorch_model.bin"))
    return folder


def save_target_model(folder: str, world: World, *, tied: bool = True) -> str:
    """A target-model folder with only what accept reads: config, embed (and head), tokenizer."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump({"architectures": ["LlamaForCausalLM"], "hidden_size": H, "num_hidden_layers": 10,
                   "vocab_size": VOCAB, "tie_word_embeddings": tied}, fh)
    tensors = {"model.embed_tokens.weight": world.model.embed.weight.detach().clone(),
               "model.norm.weight": world.model.final_norm.weight.detach().clone()}
    if not tied:
        tensors["lm_head.weight"] = world.head.clone()
    write_safetensors(tensors, os.path.join(folder, "model-00001-of-00001.safetensors"))
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as fh:
        json.dump({"metadata": {}, "weight_map": {k: "model-00001-of-00001.safetensors" for k in tensors}}, fh)
    vocab = {f"w{i}": i for i in range(VOCAB)}
    with open(os.path.join(folder, "tokenizer.json"), "w") as fh:
        json.dump({"model": {"type": "BPE", "vocab": vocab}, "added_tokens": []}, fh)
    return folder
