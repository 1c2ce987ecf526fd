"""The drafter's forward as SpecForge's training-time test (TTT) unrolls it: fc over the k aux
slots, the decoder layers with rotary positions t + s, the attention of step s over the step-0
keys of earlier rows and its own row's keys of steps 1..s, and lm_head's top-1 per row and step.
engines/model/accept.py reads the alignment and the sources; this module only runs it.

torch and stdlib only: shipped to the remote box by the agent.
"""

from __future__ import annotations

import math
import threading

from eagle3_tui.engines.model.drafter import Drafter
from eagle3_tui.engines.model.drafter_shape import layer_prefix
from eagle3_tui.engines.read.stats import Cancelled

QUERY_CHUNK = 256  # query rows per attention block in steps >= 1: bounds the [heads, rows, T] scores
ROW_CHUNK = 1024  # rows per lm_head block: bounds the [rows, draft_vocab] logits


def _rms(x, w, eps):
    # lazy: torch: loaded when used, never at start-up
    import torch

    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()


def rotary_tables(d: Drafter, positions):
    """cos, sin [len(positions), head_dim] for Llama rotary (default, linear or llama3 scaling)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    dim = d.head_dim
    inv = 1.0 / (d.rope_theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    sc = d.rope_scaling or {}
    kind = sc.get("rope_type") or sc.get("type")
    pos = positions.to(torch.float32)
    if kind == "linear":
        pos = pos / float(sc.get("factor", 1.0))
    elif kind == "llama3":
        factor, low, high = float(sc["factor"]), float(sc["low_freq_factor"]), float(sc["high_freq_factor"])
        orig = float(sc["original_max_position_embeddings"])
        wave = 2 * math.pi / inv
        smooth = (orig / wave - low) / (high - low) if low != high else torch.zeros_like(inv)
        inv = torch.where(wave < orig / high, inv,
                          torch.where(wave > orig / low, inv / factor, (1 - smooth) * inv / factor + smooth * inv))
    ang = torch.outer(pos, inv)
    emb = torch.cat((ang, ang), dim=-1)
    return emb.cos(), emb.sin()


def rope_rows(d: Drafter, n: int):
    """cos, sin for positions 0..n-1: rows of one table kept on the drafter, grown when a longer
    sample comes (a scan asks for the same positions file after file; the tables cost a third
    of a small file's draft). Row p depends on p alone."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if d.rope is None or d.rope[0].shape[0] < n:
        have = d.rope[0].shape[0] if d.rope is not None else 0
        d.rope = rotary_tables(d, torch.arange(max(n, 2 * have)))
    cos, sin = d.rope
    return cos[:n], sin[:n]


def _rope(x, cos, sin):
    # lazy: torch: loaded when used, never at start-up
    import torch

    half = x.shape[-1] // 2
    rot = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rot * sin


def draft_tokens(d: Drafter, aux, tokens: list, *, cancel: threading.Event | None = None):
    """[(draft target ids [T], top-1 probability [T]) per step]; tokens[s] is the input at step s.

    The hidden input of step 0 is fc(aux); later steps take the previous step's output.
    """
    # lazy: torch: loaded when used, never at start-up
    import torch
    from torch.nn import functional as F

    w = d.weights
    T = aux.shape[0]
    nh, nkv, hd = d.heads, d.kv_heads, d.head_dim

    f32: dict = {}  # each bf16/fp16 weight is converted once per call, not once per step

    def lin(x, name):
        if name not in f32:
            f32[name] = w[name].float()
        return x @ f32[name].T

    def stop():
        if cancel is not None and cancel.is_set():
            raise Cancelled()

    sh = d.shape
    with torch.no_grad():
        h = project(d, aux)
        keys: list[list] = [[] for _ in range(sh.layers)]  # per layer: its keys of steps 0..s
        values: list[list] = [[] for _ in range(sh.layers)]
        out = []
        d2t = w["d2t"].to(torch.int64)
        cos_all, sin_all = rope_rows(d, T + len(tokens))
        for s, tok in enumerate(tokens):
            stop()
            emb = w["embed_tokens.weight"][tok].float()
            cos, sin = cos_all[s : s + T], sin_all[s : s + T]
            for i in range(sh.layers):
                p = layer_prefix(i)
                if i == 0:  # embedding and state side by side into a 2H attention (drafter_shape.py)
                    normed = _rms(h, w[p + "hidden_norm.weight"], d.eps)
                    x = torch.cat((_rms(emb, w[p + "input_layernorm.weight"], d.eps), normed), dim=-1)
                    residual = normed if sh.norm_before_residual else h
                else:
                    x, residual = _rms(h, w[p + sh.later_norms[i - 1]], d.eps), h
                q = lin(x, p + "self_attn.q_proj.weight").view(T, nh, hd).transpose(0, 1)
                k = lin(x, p + "self_attn.k_proj.weight").view(T, nkv, hd).transpose(0, 1)
                v = lin(x, p + "self_attn.v_proj.weight").view(T, nkv, hd).transpose(0, 1)
                q, k = _rope(q, cos, sin), _rope(k, cos, sin)
                if nkv != nh:
                    k = k.repeat_interleave(nh // nkv, dim=0)
                    v = v.repeat_interleave(nh // nkv, dim=0)
                keys[i].append(k)
                values[i].append(v)
                if s == 0:
                    a = F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=True)[0]
                else:
                    a = _ttt_attention(q, keys[i], values[i], stop)
                a = a.transpose(0, 1).reshape(T, nh * hd)
                h = residual + lin(a, p + "self_attn.o_proj.weight")
                m = _rms(h, w[p + "post_attention_layernorm.weight"], d.eps)
                h = h + lin(F.silu(lin(m, p + "mlp.gate_proj.weight")) * lin(m, p + "mlp.up_proj.weight"),
                            p + "mlp.down_proj.weight")
            ids = torch.empty(T, dtype=torch.int64)
            prob = torch.empty(T, dtype=torch.float32)
            for r0 in range(0, T, ROW_CHUNK):
                stop()
                hr = h[r0 : r0 + ROW_CHUNK]
                if sh.logits_normed:
                    hr = _rms(hr, w["norm.weight"], d.eps)
                logits = lin(hr, "lm_head.weight")
                pr, top = torch.softmax(logits, dim=-1).max(-1)
                ids[r0 : r0 + ROW_CHUNK] = top + d2t[top]
                prob[r0 : r0 + ROW_CHUNK] = pr
            out.append((ids, prob))
            if sh.feed_normed:  # the engines' norm_output: the next step gets the post-norm state
                h = _rms(h, w["norm.weight"], d.eps)
    return out


def project(d: Drafter, aux):
    """fc over the k aux states [T, k*Ht] -> [T, H], after norm_before_fc's one RMSNorm over the
    concatenation and fc_norm's one per state, in that order (sglang 0.5.23 llama_eagle3.py
    238-247; vllm 0.34.0 llama_eagle3.py 396-409)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    w = d.weights
    x = aux.float()
    if d.shape.norm_before_fc:
        x = _rms(x, w["input_norm.weight"], d.eps)
    if d.shape.fc_norm:
        x = torch.cat([_rms(c, w[f"fc_norm.{i}.weight"], d.eps) for i, c in enumerate(x.split(d.target_hidden, -1))],
                      dim=-1)
    return x @ w["fc.weight"].float().T


def _ttt_attention(q, keys, values, stop):
    """Attention of step s >= 1: causal over step-0 keys, plus each later step's key of the same row."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    nh, T, hd = q.shape
    scale = 1.0 / math.sqrt(hd)
    out = torch.empty_like(q)
    k0, v0 = keys[0], values[0]
    for a in range(0, T, QUERY_CHUNK):
        stop()
        b = min(T, a + QUERY_CHUNK)
        qc = q[:, a:b]
        causal = torch.matmul(qc, k0[:, :b].transpose(1, 2)) * scale  # [nh, rows, b]
        rows = torch.arange(a, b)[:, None]
        causal.masked_fill_(torch.arange(b)[None, :] > rows, float("-inf"))
        diag = torch.stack([(qc * ki[:, a:b]).sum(-1) * scale for ki in keys[1:]], dim=-1)  # [nh, rows, s]
        p = torch.softmax(torch.cat((causal, diag), dim=-1), dim=-1)
        o = torch.matmul(p[..., :b], v0[:, :b])
        for i, vi in enumerate(values[1:]):
            o = o + p[..., b + i, None] * vi[:, a:b]
        out[:, a:b] = o
    return out
