"""SpecForge's own EAGLE-3 drafter (the `specforge` package from PyPI, 0.2.0, installed with
--no-deps: its draft model imports with what this machine has), trained and scored by its own
code on the demo transformer's hidden states.

`hits` is SpecForge's training step for one sequence, the lines of specforge 0.2.0
algorithms/eagle3/model.py `OnlineEagle3Model.forward` (sdpa backend) that count its per-step
accuracy: target = padding(target logits, left=False) (modeling/target/target_head.py 103-108),
the target's choice at each position being the sample's next token (a target that agrees with
its text, as on regenerated data; accept's default targets, the sample ids),
input ids and loss mask shifted once before step 0 and again after every step (`padding`,
utils.py 129-135), `project_hidden_states` then, per step, `embed_input_ids`, `backbone` with
`cache_hidden` and `compute_logits`, the hits `(argmax + d2t[argmax] == target) * loss_mask`
(`_acc_and_loss`). The draft model's forward is SpecForge's (LlamaForCausalLMEagle3: fc_norm,
norm_output, the TTT attention); only the loop is written here, since the module that holds it
imports triton for its loss kernel. torch.compile is switched off (SpecForge's RMSNorm is
compiled), which changes no value.

Rows whose target lies past the sample's end are dropped from SpecForge's counts, as
docs/accept.md says accept does (SpecForge counts them against a padding target).
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch.nn import functional as F

from tests.helpers.drafter import DRAFT_VOCAB, EPS, HEAD_DIM, HEADS, KV_HEADS, MLP, THETA, VOCAB, H, config

warnings.filterwarnings("ignore", message="flash_attn is not found")
llama3_eagle = pytest.importorskip("specforge.modeling.draft.llama3_eagle",
                                   reason="SpecForge (pip install --no-deps specforge) checks the drafter's forward")
specforge_utils = pytest.importorskip("specforge.utils")


def _eager():
    import torch._dynamo

    torch._dynamo.config.disable = True  # SpecForge's compiled RMSNorm, run eagerly (same values)


def build(weights: dict, *, fc_norm: bool = False, norm_output: bool = True):
    """SpecForge's LlamaForCausalLMEagle3 of the tests' sizes holding `weights` (missing fc_norm
    weights start at SpecForge's init, ones)."""
    from transformers import LlamaConfig

    _eager()
    cfg = LlamaConfig(hidden_size=H, intermediate_size=MLP, num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
                      head_dim=HEAD_DIM, num_hidden_layers=1, vocab_size=VOCAB, rms_norm_eps=EPS,
                      rope_theta=THETA, max_position_embeddings=2048, hidden_act="silu")
    cfg.draft_vocab_size = DRAFT_VOCAB
    cfg.target_hidden_size = H
    cfg.fc_norm = fc_norm
    cfg.norm_output = norm_output
    model = llama3_eagle.LlamaForCausalLMEagle3(cfg, attention_backend="sdpa").float()
    state = model.state_dict()
    state.update({k: v.detach().clone() for k, v in weights.items() if k in state})
    model.load_state_dict(state, strict=True)
    return model


def config_of(*, fc_norm: bool, norm_output: bool) -> dict:
    cfg = config()
    cfg["fc_norm"] = fc_norm
    cfg["norm_output"] = norm_output
    return cfg


def _loop(model, aux, ids, loss_mask, target_ids, length):
    """Per step: (hits per row [T] as SpecForge counts them, logits); one sequence, batch 1."""
    padding = specforge_utils.padding
    T = ids.shape[0]
    input_ids = padding(ids[None], left=False)
    loss_mask = loss_mask[None].to(torch.float32)
    target_padded = F.pad(padding(target_ids[None], left=False), (0, length), value=0)
    hidden = model.project_hidden_states(aux[None].float())
    position_ids = torch.arange(T)[None]
    attention_mask = model.prepare_decoder_attention_mask(
        attention_mask=torch.ones(1, T, dtype=torch.bool), hidden_states=hidden, batch_size=1, seq_length=T,
        past_key_values_length=0)
    cache_hidden: list = [[], []]
    out = []
    for idx in range(length):
        emb = model.embed_input_ids(input_ids).to(hidden.dtype)
        hidden = model.backbone(input_embeds=emb, hidden_states=hidden, cache_hidden=cache_hidden,
                                attention_mask=attention_mask, position_ids=position_ids, past_key_values=None,
                                use_cache=True)
        logits = model.compute_logits(hidden)
        pred = logits.argmax(-1)
        pred = pred + model.d2t[pred]
        target = target_padded[:, idx : idx + T]
        out.append((((pred == target) * loss_mask)[0], logits[0], loss_mask[0].clone()))
        input_ids = padding(input_ids, left=False)
        loss_mask = padding(loss_mask, left=False)
    return out


def next_tokens(ids: torch.Tensor) -> torch.Tensor:
    """The target's choice after each position: the sample's next token (0 after the last)."""
    out = torch.zeros_like(ids)
    out[:-1] = ids[1:]
    return out


def hits(model, aux, ids, loss_mask, length: int = 3) -> list[tuple[int, int]]:
    """(hits, rows counted) per step, SpecForge's counts without the rows past the sample's end."""
    with torch.no_grad():
        steps = _loop(model, aux, ids, loss_mask, next_tokens(ids), length)
    T = ids.shape[0]
    out = []
    for idx, (hit, _logits, mask) in enumerate(steps):
        inside = torch.arange(T) + 2 + idx < T  # the token guessed lies inside the sample
        out.append((int((hit.bool() & inside).sum()), int((mask.bool() & inside).sum())))
    return out


def fine_tune(model, seqs, aux_of, *, steps: int = 40, length: int = 2, lr: float = 3e-3, seed: int = 0):
    """A few optimiser steps of SpecForge's model by its own forward (cross-entropy on the
    target's tokens over the loss rows of each TTT step): its fc_norm weights move off their init."""
    torch.manual_seed(seed)
    params = [p for n, p in model.named_parameters() if not n.startswith("embed_tokens")]
    opt = torch.optim.Adam(params, lr=lr)
    g = torch.Generator().manual_seed(seed)
    t2d = model.t2d
    d2t = model.d2t
    target_of = torch.full((VOCAB,), -100, dtype=torch.int64)
    target_of[torch.arange(DRAFT_VOCAB) + d2t] = torch.arange(DRAFT_VOCAB)
    for _ in range(steps):
        seq = seqs[int(torch.randint(len(seqs), (1,), generator=g))]
        targets = next_tokens(seq.ids)
        loss = torch.zeros(())
        for idx, (_hit, logits, mask) in enumerate(_loop(model, aux_of(seq), seq.ids, seq.loss_mask, targets, length)):
            T = seq.ids.shape[0]
            want = torch.full((T,), -100, dtype=torch.int64)
            pos = torch.arange(T) + 1 + idx
            ok = (pos < T) & mask.bool() & t2d[targets[pos.clamp(max=T - 1)]]
            want[ok] = target_of[targets[pos[ok]]]
            if bool((want != -100).any()):
                loss = loss + F.cross_entropy(logits, want, ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model
