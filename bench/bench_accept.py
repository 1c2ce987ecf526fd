"""`accept` on a big sample vs the bare torch forward of the same draft layer, same inputs, same run.

Default sizes are the issue's (T = 4096, H = 7168, a drafter of that width with random bf16
weights, float32 compute on CPU); on a small shared machine pass smaller ones, e.g.
    python bench/bench_accept.py --tokens 1024 --hidden 2048
Ours: accept_file(sample, drafter, steps=1) end to end (read the sample and the drafter from
disk, fc, the decoder layer, norm, lm_head, d2t, metrics, per-token records).
Baseline: the same one-step forward typed by hand in plain torch on tensors already in memory
(float32 weights, SDPA causal attention, argmax), no loading, no metrics.
Target: ours at most 1.3x the baseline. Best of --repeat runs each, interleaved.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make(folder: str, T: int, H: int, vocab: int, draft_vocab: int, mlp: int, k: int = 3):
    import torch

    from eagle3_tui.demo.hf_folder import write_safetensors

    g = torch.Generator().manual_seed(0)
    hd = 128 if H % 128 == 0 else H // 8
    heads, kv = H // hd, max(1, min(8, H // hd))

    def n(*shape):
        return (torch.randn(*shape, generator=g) / shape[-1] ** 0.5).bfloat16()

    w = {
        "embed_tokens.weight": n(vocab, H), "fc.weight": n(H, k * H),
        "midlayer.input_layernorm.weight": torch.ones(H).bfloat16(),
        "midlayer.hidden_norm.weight": torch.ones(H).bfloat16(),
        "midlayer.self_attn.q_proj.weight": n(heads * hd, 2 * H),
        "midlayer.self_attn.k_proj.weight": n(kv * hd, 2 * H),
        "midlayer.self_attn.v_proj.weight": n(kv * hd, 2 * H),
        "midlayer.self_attn.o_proj.weight": n(H, heads * hd),
        "midlayer.post_attention_layernorm.weight": torch.ones(H).bfloat16(),
        "midlayer.mlp.gate_proj.weight": n(mlp, H), "midlayer.mlp.up_proj.weight": n(mlp, H),
        "midlayer.mlp.down_proj.weight": n(H, mlp), "norm.weight": torch.ones(H).bfloat16(),
        "lm_head.weight": n(draft_vocab, H),
        "d2t": torch.zeros(draft_vocab, dtype=torch.int64),
    }
    os.makedirs(os.path.join(folder, "drafter"))
    write_safetensors(w, os.path.join(folder, "drafter", "model.safetensors"))
    with open(os.path.join(folder, "drafter", "config.json"), "w") as fh:
        json.dump({"architectures": ["LlamaForCausalLMEagle3"], "hidden_size": H, "intermediate_size": mlp,
                   "num_attention_heads": heads, "num_key_value_heads": kv, "head_dim": hd, "rms_norm_eps": 1e-5,
                   "vocab_size": vocab, "draft_vocab_size": draft_vocab, "target_hidden_size": H}, fh)
    ids = torch.randint(0, vocab, (T,), generator=g)
    mask = torch.ones(T, dtype=torch.int64)
    aux = torch.randn(1, T, k * H, generator=g).bfloat16()
    torch.save({"input_ids": ids, "loss_mask": mask, "aux_hidden_state": aux}, os.path.join(folder, "s.ckpt"))
    return w, ids, aux[0], (heads, kv, hd)


def baseline(w32: dict, ids, aux, shape, eps=1e-5):
    import torch
    from torch.nn import functional as F

    heads, kv, hd = shape
    T = aux.shape[0]

    def rms(x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * g

    with torch.no_grad():
        h = aux.float() @ w32["fc.weight"].T
        tok = torch.cat([ids[1:], ids[:1] * 0])
        x = torch.cat([rms(w32["embed_tokens.weight"][tok], w32["midlayer.input_layernorm.weight"]),
                       rms(h, w32["midlayer.hidden_norm.weight"])], -1)
        q = (x @ w32["midlayer.self_attn.q_proj.weight"].T).view(T, heads, hd).transpose(0, 1)
        k = (x @ w32["midlayer.self_attn.k_proj.weight"].T).view(T, kv, hd).transpose(0, 1)
        v = (x @ w32["midlayer.self_attn.v_proj.weight"].T).view(T, kv, hd).transpose(0, 1)
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(T).float(), inv)
        cos, sin = torch.cat([ang, ang], -1).cos(), torch.cat([ang, ang], -1).sin()

        def rope(t):
            return t * cos + torch.cat([-t[..., hd // 2:], t[..., : hd // 2]], -1) * sin

        q, k = rope(q), rope(k)
        k, v = k.repeat_interleave(heads // kv, 0), v.repeat_interleave(heads // kv, 0)
        a = F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=True)[0]
        h = h + a.transpose(0, 1).reshape(T, -1) @ w32["midlayer.self_attn.o_proj.weight"].T
        m = rms(h, w32["midlayer.post_attention_layernorm.weight"])
        h = h + (F.silu(m @ w32["midlayer.mlp.gate_proj.weight"].T) * (m @ w32["midlayer.mlp.up_proj.weight"].T)) \
            @ w32["midlayer.mlp.down_proj.weight"].T
        logits = rms(h, w32["norm.weight"]) @ w32["lm_head.weight"].T
        return logits.argmax(-1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--hidden", type=int, default=7168)
    ap.add_argument("--mlp", type=int, default=0, help="intermediate size (default 2.5 x hidden)")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--draft-vocab", type=int, default=32000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    import torch

    if a.threads:
        torch.set_num_threads(a.threads)
    from eagle3_tui.engines.model import accept as engine

    mlp = a.mlp or int(2.5 * a.hidden)
    with tempfile.TemporaryDirectory() as tmp:
        w, ids, aux, shape = make(tmp, a.tokens, a.hidden, a.vocab, a.draft_vocab, mlp)
        w32 = {k: (v.float() if v.is_floating_point() else v) for k, v in w.items()}
        base, ours = [], []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            want = baseline(w32, ids, aux, shape)
            base.append(time.perf_counter() - t0)
            engine._CACHE.clear()  # each run loads the drafter from disk, as a fresh CLI call does
            t0 = time.perf_counter()
            r = engine.accept_file(os.path.join(tmp, "s.ckpt"), os.path.join(tmp, "drafter"), steps=1)
            ours.append(time.perf_counter() - t0)
            assert "error" not in r, r
        got = torch.tensor([t["draft"] for t in r["per_token"]])
        agree = float((got == want[: len(got)]).float().mean())
    b, o = min(base), min(ours)
    print(json.dumps({"tokens": a.tokens, "hidden": a.hidden, "mlp": mlp, "draft_vocab": a.draft_vocab,
                      "threads": torch.get_num_threads(), "baseline_s": round(b, 3), "accept_s": round(o, 3),
                      "ratio": round(o / b, 3), "target": 1.3, "same_drafts": round(agree, 4)}))


if __name__ == "__main__":
    main()
