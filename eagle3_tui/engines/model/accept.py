"""Run an EAGLE-3 drafter on a sample's hidden states, as training does, and score its guesses.

Alignment (read from SpecForge: specforge/modeling/target/target_head.py `TargetHead.preprocess`,
specforge/utils.py `padding`, specforge/algorithms/eagle3/model.py `OnlineEagle3Model.forward`
with `_compute_target_p` / `_compute_metric_counts`, specforge/core/eagle3_adapters.py
`SdpaLikeAdapter.step_view`, specforge/modeling/draft/llama3_eagle.py `LlamaAttention.forward`
(the `cache_hidden` branch) and `LlamaForCausalLMEagle3.project_hidden_states/compute_logits`):

- `padding(x, left=False)` shifts left by one and pads with 0: row t gets x[t+1].
- Row t of the drafter sees the target's aux states of token t (fc of the k slots concatenated,
  [T, k*Ht] -> [T, H]) and the embedding of token t+1 (input ids shifted once before step 0).
- Step s = 0..K-1 (SpecForge's TTT unroll, `length` there): the token fed at row t is ids[t+1+s]
  (the ids are shifted once more after every step: teacher forcing with the sample's ids), the
  hidden input is fc(aux) at s = 0 and the drafter's own previous output (before `norm`) after
  that. Rotary positions are t + s. The query at row t attends to the step-0 keys of rows <= t
  (causal) and to its own row's keys of steps 1..s, all in one softmax.
- Logits: lm_head(norm(h)) (lm_head(h) for a SpecForge drafter with norm_output false); draft
  id d maps to target id d + d2t[d]. fc_norm / norm_before_fc before fc, N decoder layers, and
  the engines' norm_output (the post-norm state fed to the next step) as drafter_shape.py reads
  them from the producers' and engines' code; each layer keeps its own keys across the steps.
- Target of row t at step s: the target's next-token choice at position t+1+s, i.e. the argmax
  of the target's logits there (SpecForge: target = lm_head(post-norm final), shifted once;
  used here when --model gives the head and the sample's final state is post-norm), or the
  sample's own token ids[t+2+s] otherwise. Target ids outside the draft vocabulary are misses,
  as in SpecForge's metric.
- Rows counted at step s: loss_mask[t+s] == 1 (the loss mask is shifted with every step, not
  before step 0), or every valid row with all_rows. SpecForge also counts the last rows, whose
  target there is padding (a sure miss); they are left out here.

Metrics:
- top1: step-0 accuracy (= steps[0]).
- steps[s]: SpecForge's per-step training accuracy: hits / counted rows at step s.
- tau, the simulated acceptance length of a draft of K tokens with greedy verification:
  tau = 1 + mean over the rows counted at step 0 of a_t, where a_t is the number of leading
  steps s = 0, 1, ... that hit (stopping at the first miss, at K, or where no target exists).
  The 1 is the token the target model adds itself on every verification (EAGLE's convention),
  so tau lies in [1, K+1]. Teacher forcing equals the drafter feeding itself its own tokens as
  long as it hits, which is all a_t depends on; with ids as targets this is exact for this
  sequence, with the target's argmax it is exact when the sample is the target's own greedy
  text and an estimate otherwise.

torch and stdlib only: shipped to the remote box by the agent.
"""

from __future__ import annotations

import math
import os
import threading

from eagle3_tui.engines.model.drafter import Drafter, DrafterError, load_drafter, read_target_head, read_vocab
from eagle3_tui.engines.model.drafter_shape import layer_prefix
from eagle3_tui.engines.read.borrow_ids import borrow_ids
from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.sample import Sample, SampleError, blank_ids
from eagle3_tui.engines.read.stats import Cancelled
from eagle3_tui.engines.results.accept import AcceptResult, AcceptToken
from eagle3_tui.engines.results.errors import error_result

QUERY_CHUNK = 256  # query rows per attention block in steps >= 1: bounds the [heads, rows, T] scores
ROW_CHUNK = 1024  # rows per lm_head block: bounds the [rows, draft_vocab] logits


def accept_file(path: str, drafter: str, *, model: str | None = None, steps: int = 3, all_rows: bool = False,
                order: list[int] | None = None, slots: int | None = None, hidden: int | None = None,
                cancel: threading.Event | None = None, ids_from: str | None = None) -> AcceptResult:
    """Acceptance JSON object for one sample; unusable inputs become {"path", "drafter", "error"}.
    ids_from: a sample whose ids an id-less sample borrows (engines/read/borrow_ids.py)."""
    try:
        d = cached_drafter(drafter, model)
        sample = load_sample(path, slots=slots, hidden=hidden)
        if ids_from:
            sample = borrow_ids(sample, ids_from)
        result = accept(sample, d, model=model, steps=steps, all_rows=all_rows, order=order, cancel=cancel)
        if (blank := blank_ids(sample.ids)) is not None:  # as pair and compare notice (sample.blank_ids)
            result.setdefault("notes", []).append(
                f"{blank}: the drafter is fed that one token at every row, so this score says nothing about the "
                "hidden states (--ids-from SAMPLE borrows the ids of the matching training sample)")
    except (SampleError, MemoryError) as err:
        return {"path": path, "drafter": drafter, **error_result(path, err)}
    result["path"] = path
    if ids_from:
        result["ids_from"] = ids_from
    return result


_CACHE: dict[tuple, Drafter] = {}
_CACHE_LOCK = threading.Lock()


def cached_drafter(path: str, model: str | None) -> Drafter:
    """Load once per (folder, model, weight file mtimes): a UI or scan runs many samples."""
    stamp = []
    for name in ("config.json", "model.safetensors", "pytorch_model.bin"):
        try:
            st = os.stat(os.path.join(path, name))
            stamp.append((name, st.st_size, st.st_mtime_ns))
        except OSError:
            pass
    key = (os.path.abspath(path), model and os.path.abspath(model), tuple(stamp))
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE.clear()  # one drafter at a time: they can be gigabytes
            _CACHE[key] = load_drafter(path, model)
        return _CACHE[key]


def accept(sample: Sample, d: Drafter, *, model: str | None = None, steps: int = 3, all_rows: bool = False,
           order: list[int] | None = None, cancel: threading.Event | None = None,
           limit: int | None = None) -> AcceptResult:
    """limit: run on the first `limit` valid rows only. Attention is causal, so rows inside the
    prefix get exactly the drafter's output on the whole sample; rows whose targets lie past the
    prefix are not scored (a quick scan reads no more of a big file than that prefix)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if steps < 1:
        raise SampleError("--steps must be at least 1")
    notes: list[str] = []
    n = sample.valid_len if limit is None else min(sample.valid_len, limit)
    aux = aux_input(sample, d, order, n)
    if sample.ids is None:
        raise SampleError("the sample has no token ids: the drafter needs the embedding of each next token")
    ids = sample.ids[:n].to(torch.int64)
    if n < 3:
        raise SampleError(f"only {n} valid rows: too short to score")
    rows = int(d.weights["embed_tokens.weight"].shape[0])
    if n and (int(ids.min()) < 0 or int(ids.max()) >= rows):
        bad = int(ids.min()) if int(ids.min()) < 0 else int(ids.max())
        raise SampleError(f"token id {bad} is outside the drafter's vocabulary ({rows} tokens): "
                          "the ids are from another tokenizer")
    targets, source = target_tokens(sample, d, model, n, notes)

    def tok(shift: int) -> torch.Tensor:  # ids[t + shift], 0 past the end (SpecForge's padding)
        out = torch.zeros(n, dtype=torch.int64)
        if shift < n:
            out[: n - shift] = ids[shift:]
        return out

    mask, rows_from = _scored_rows(sample, n, all_rows, notes)

    drafts = draft_tokens(d, aux, [tok(1 + s) for s in range(steps)], cancel=cancel)
    t = torch.arange(n)
    hits, counted = [], []
    for s, (draft, _p) in enumerate(drafts):
        pos = t + 2 + s  # the position whose token row t guesses at step s
        have = targets_available(pos, targets)
        tgt = targets[pos.clamp(max=n - 1)]
        hit = (draft == tgt) & have
        ok = have.clone()
        if mask is not None:
            shifted = torch.zeros(n, dtype=torch.bool)
            shifted[: n - s] = mask[s:]
            ok &= shifted
        hits.append(hit)
        counted.append(ok)
    step_acc = [(float((h & c).sum()) / int(c.sum())) if int(c.sum()) else None for h, c in zip(hits, counted)]

    rows0 = counted[0]
    lead = torch.zeros(n, dtype=torch.int64)
    alive = torch.ones(n, dtype=torch.bool)
    for h in hits:
        alive &= h
        lead += alive.to(torch.int64)
    n_rows = int(rows0.sum())
    tau = 1.0 + float(lead[rows0].sum()) / n_rows if n_rows else None
    per_token = _per_token(rows0, targets, drafts[0], hits[0], lead, read_vocab(model))
    return {
        "path": sample.path,
        "drafter": d.path,
        "rows": n_rows,
        "top1": step_acc[0],
        "steps": step_acc,
        "tau": tau,
        "per_token": per_token,
        "target_source": source,
        "rows_from": rows_from,
        "valid_tokens": n,
        "order": list(order) if order is not None else None,
        "drafter_info": d.describe(),
        "notes": notes + list(sample.assumptions),
    }


def _scored_rows(sample: Sample, n: int, all_rows: bool, notes: list[str]):
    """(the loss mask of the first n rows, or None for every row; where the rows come from)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if not all_rows and sample.loss_mask is not None:
        mask = sample.loss_mask[:n].to(torch.bool)
        if not bool(mask.any()):
            raise SampleError("the loss mask is all zero: no rows carry loss (use --all-rows to score every row)")
        return mask, "loss mask"
    if not all_rows:
        notes.append("no loss mask in the sample: every valid row scored")
    return None, "all rows"


def _per_token(rows0, targets, first, hit0, lead, vocab) -> list[AcceptToken]:
    """Step 1 per scored row: the target, the draft, its probability, hit, tokens accepted."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    draft0, p0 = first
    out: list[AcceptToken] = []
    for r in torch.nonzero(rows0).flatten().tolist():
        entry: AcceptToken = {"row": r, "target": int(targets[r + 2]), "draft": int(draft0[r]), "p": round(float(p0[r]), 5),
                 "hit": bool(hit0[r]), "accepted": int(lead[r])}
        if vocab is not None:
            entry["target_text"] = vocab.get(entry["target"])
            entry["draft_text"] = vocab.get(entry["draft"])
        out.append(entry)
    return out


def targets_available(pos, targets):
    """Positions whose target is known: inside the sample (the token after the last is unknown)."""
    return pos < targets.shape[0]


def aux_input(sample: Sample, d: Drafter, order: list[int] | None, rows: int | None = None):
    """The k aux slots concatenated [rows, k*Ht] in the order fc expects, or one clear error.
    Only the first `rows` rows are read (a memory-mapped file reads no more)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    slots = [s.tensor for s in sample.slots]
    if order is not None:
        if len(order) != d.k or any(not 0 <= i < len(slots) for i in order):
            raise SampleError(f"--order needs {d.k} slot indices from 0 to {len(slots) - 1}, got {order}")
        slots = [slots[i] for i in order]
    h = sample.hidden
    if slots and h != d.target_hidden:
        raise SampleError(f"the sample's hidden size is {h}, the drafter expects target_hidden_size "
                          f"{d.target_hidden} (fc takes k*H = {d.k}x{d.target_hidden} = {d.fc_width})")
    if len(slots) != d.k:
        raise SampleError(f"fc expects k*H = {d.k}x{d.target_hidden} = {d.fc_width} columns; the sample has "
                          f"{len(slots)} aux slot(s) of {h} = {len(slots) * h}")
    return torch.cat([s[:rows].float() for s in slots], dim=-1)


def target_tokens(sample: Sample, d: Drafter, model: str | None, n: int, notes: list[str]):
    """(targets [n], source): targets[j] = the token the target puts at position j (j >= 1).

    "model": argmax of the target's LM head over its post-norm final state at j-1;
    "ids": the sample's own ids[j].
    """
    # lazy: torch: loaded when used, never at start-up
    import torch

    if model is not None:
        final = sample.final
        if final is None:
            notes.append("the sample has no final hidden state: targets are the sample's token ids")
        elif sample.final_norm != "post":
            notes.append(f"the sample's final state is {sample.final_norm or 'of unknown'}-norm, the LM head needs "
                         "it after the norm: targets are the sample's token ids")
        else:
            head, _where = read_target_head(model)
            if head.shape[1] != final.tensor.shape[1]:
                raise DrafterError(f"the model's LM head is {list(head.shape)}, the final state has width "
                                   f"{final.tensor.shape[1]}")
            w = head.float()
            out = torch.zeros(n, dtype=torch.int64)
            fin = final.tensor[:n]
            for a in range(0, n - 1, ROW_CHUNK):
                b = min(n - 1, a + ROW_CHUNK)
                out[a + 1 : b + 1] = (fin[a:b].float() @ w.T).argmax(-1)
            return out, "model"
    return sample.ids[:n].to(torch.int64), "ids"


# ------------------------------------------------------------------------------------ forward


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
