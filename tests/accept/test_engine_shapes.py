"""accept on the drafter shapes SpecForge does not build, in their producers' published names and
configs: SGLang's multi-layer EAGLE-3 (`layers.0..N-1`), speculators' (later layers with
input_layernorm, norm_before_residual, norm_output feeding the post-norm state back), ModelOpt's
(`eagle_module.layers.i`), norm_before_fc (`input_norm`), and 4 aux states with fc_norm. Each
drafter is the trained one with the extra parts added; its per-step hits on held-out samples of
real states equal those of the engines' forward transcribed in tests/helpers/engine_drafter.py,
and differ from the forward without that part (what accept computed before)."""

from __future__ import annotations

import math

import pytest
import torch

from eagle3_tui.engines.model.accept import accept_file
from tests.helpers.accept import _save_sample
from tests.helpers.drafter import (
    AUX,
    DRAFT_VOCAB,
    EPS,
    HEAD_DIM,
    HEADS,
    KV_HEADS,
    MLP,
    THETA,
    VOCAB,
    H,
    config,
    save_drafter,
)
from tests.helpers.engine_drafter import engine_logits, step_hits

AUX4 = (2, 5, 7, 9)


def _published(weights: dict) -> dict:
    return {("layers.0." + k.removeprefix("midlayer.") if k.startswith("midlayer.") else k): v.detach().clone()
            for k, v in weights.items()}


def _layer(g: torch.Generator, i: int, norm: str, out: float = 0.4) -> dict:
    """A later decoder layer (q/k/v take H), small enough that the drafter still drafts; `out` scales
    what it adds to the residual."""
    p = f"layers.{i}."

    def n(*shape, std):
        return torch.randn(*shape, generator=g) * std

    return {
        p + norm + ".weight": 1 + n(H, std=0.1),
        p + "self_attn.q_proj.weight": n(HEADS * HEAD_DIM, H, std=1 / math.sqrt(H)),
        p + "self_attn.k_proj.weight": n(KV_HEADS * HEAD_DIM, H, std=1 / math.sqrt(H)),
        p + "self_attn.v_proj.weight": n(KV_HEADS * HEAD_DIM, H, std=1 / math.sqrt(H)),
        p + "self_attn.o_proj.weight": n(H, HEADS * HEAD_DIM, std=out / math.sqrt(H)),
        p + "post_attention_layernorm.weight": 1 + n(H, std=0.1),
        p + "mlp.gate_proj.weight": n(MLP, H, std=1 / math.sqrt(H)),
        p + "mlp.up_proj.weight": n(MLP, H, std=1 / math.sqrt(H)),
        p + "mlp.down_proj.weight": n(H, MLP, std=out / math.sqrt(MLP)),
    }


def _slot_rms(trained, boundaries) -> list[float]:
    return [float(torch.cat([s.states[b] for s in trained.held_out]).pow(2).mean(-1).sqrt().mean())
            for b in boundaries]


def _speculators_config(layers: int) -> dict:
    return {"speculators_model_type": "eagle3", "architectures": ["Eagle3Speculator"], "draft_vocab_size": DRAFT_VOCAB,
            "norm_output": True, "target_hidden_size": H,
            "eagle_aux_hidden_state_layer_ids": [1, 4, 6],
            "transformer_layer_config": {"model_type": "llama", "hidden_size": H, "intermediate_size": MLP,
                                         "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
                                         "head_dim": HEAD_DIM, "num_hidden_layers": layers, "rms_norm_eps": EPS,
                                         "rope_theta": THETA, "vocab_size": VOCAB}}


def _build(trained, root):
    g = torch.Generator().manual_seed(3)
    base = _published(trained.weights)
    cases = {}

    w = {**base, **_layer(g, 1, "hidden_norm", out=1.5)}
    cfg = {**config(), "num_hidden_layers": 2}
    cases["SGLang, 2 layers"] = (w, cfg, None, {"layers": 2, "k": 3}, AUX, "layers", ", 2 layers, 3 aux states")

    w = {**base, **_layer(g, 1, "input_layernorm"), **_layer(g, 2, "input_layernorm")}
    opts = {"layers": 3, "k": 3, "later_norm": "input_layernorm", "feed_normed": True}
    cases["speculators, 3 layers"] = (w, _speculators_config(3), None, opts, AUX, "layers",
                                       "speculators, 3 layers, norm_output (post-norm state fed back)")
    # the residual becomes hidden_norm(h): hidden_norm scaled to h's RMS (and q/k/v's columns for it back down)
    r = float(torch.cat([torch.cat([s.states[b] for b in AUX], -1) @ base["fc.weight"].T
                         for s in trained.held_out]).pow(2).mean(-1).sqrt().mean())
    w = dict(base)
    w["layers.0.hidden_norm.weight"] = base["layers.0.hidden_norm.weight"] * r
    for proj in ("q", "k", "v"):
        name = f"layers.0.self_attn.{proj}_proj.weight"
        w[name] = torch.cat([base[name][:, :H], base[name][:, H:] / r], dim=1)
    cfg = {**_speculators_config(1), "norm_before_residual": True, "norm_output": False}
    cases["norm_before_residual"] = (w, cfg, None, {"layers": 1, "k": 3, "norm_before_residual": True}, AUX,
                                     "norm_before_residual", "speculators, 1 layer, norm_before_residual")

    w = {**base, **_layer(g, 1, "hidden_norm", out=1.5)}
    cases["ModelOpt, 2 layers"] = (w, {**config(), "num_hidden_layers": 2},
                                   lambda k: "eagle_lm_head.weight" if k == "lm_head.weight" else "eagle_module." + k,
                                   {"layers": 2, "k": 3}, AUX, "layers", "ModelOpt, 2 layers")

    rms = _slot_rms(trained, AUX)
    w = {**base, "input_norm.weight": torch.cat([torch.full((H,), r) for r in rms]) * (1 + 0.1 * torch.randn(3 * H, generator=g))}
    cfg = {**config(), "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 4, 6], "norm_before_fc": True}}
    cases["norm_before_fc"] = (w, cfg, None, {"layers": 1, "k": 3, "norm_before_fc": True}, AUX, "norm_before_fc",
                               "norm_before_fc")

    rms4 = _slot_rms(trained, AUX4)
    fc4 = torch.cat([base["fc.weight"], torch.randn(H, H, generator=g) * 0.3 / math.sqrt(H)], dim=1)
    w = {**base, "fc.weight": fc4, **{f"fc_norm.{i}.weight": torch.full((H,), r) * (1 + 0.1 * torch.randn(H, generator=g))
                                     for i, r in enumerate(rms4)}}
    cfg = {**config(), "fc_norm": True, "num_aux_hidden_states": 4,
           "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 4, 6, 8]}}
    cases["4 aux states, fc_norm"] = (w, cfg, None, {"layers": 1, "k": 4, "fc_norm": True}, AUX4, "fc_norm",
                                      "fc_norm, 4 aux states")
    out = {}
    for name, (w, cfg, rename, opts, boundaries, feature, words) in cases.items():
        folder = save_drafter(str(root / name.replace(" ", "_").replace(",", "")), w, cfg=cfg, rename=rename)
        data = root / (name.replace(" ", "_").replace(",", "") + "_data")
        data.mkdir()
        for i, seq in enumerate(trained.held_out):
            _save_sample(data / f"s_{i}.ckpt", seq, boundaries=boundaries)
        out[name] = (w, folder, data, opts, boundaries, feature, words)
    return out


@pytest.fixture(scope="module")
def shapes(trained, tmp_path_factory):
    return _build(trained, tmp_path_factory.mktemp("engine_shapes"))


def _without(opts: dict, feature: str) -> dict:
    """The forward without the case's part: one layer, no input norms, SpecForge's feedback."""
    if feature == "layers":
        return {"layers": 1, "k": opts["k"]}
    return {k: v for k, v in opts.items() if k != feature}


CASES = ["SGLang, 2 layers", "speculators, 3 layers", "ModelOpt, 2 layers", "norm_before_fc", "4 aux states, fc_norm",
         "norm_before_residual"]


@pytest.mark.parametrize("case", CASES)
def test_accept_gives_the_engines_per_step_hits(trained, shapes, case):
    w, folder, data, opts, boundaries, feature, words = shapes[case]
    differ = 0
    for i, seq in enumerate(trained.held_out):
        aux = torch.cat([seq.states[b] for b in boundaries], -1)
        with torch.no_grad():
            want = step_hits(engine_logits(w, aux, seq.ids, 3, **opts), w["d2t"], seq.ids, seq.loss_mask)
            plain = step_hits(engine_logits(w, aux, seq.ids, 3, **_without(opts, feature)), w["d2t"], seq.ids,
                              seq.loss_mask)
        differ += want != plain
        r = accept_file(str(data / f"s_{i}.ckpt"), folder, steps=3)
        assert "error" not in r, r
        assert r["rows"] == want[0][1]
        assert [round(a * n) for a, (_h, n) in zip(r["steps"], want)] == [h for h, _ in want], (case, i, r["steps"], want)
    assert want[0][0] > 0.3 * want[0][1], want  # still a drafter, not noise
    assert differ >= 1, "the case's part changes no hit: the check could not tell it is applied"
    assert words in r["drafter_info"]["shape"], r["drafter_info"]["shape"]
