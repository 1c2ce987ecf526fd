"""Load an EAGLE-3 drafter folder (and, when asked, one or two tensors of its target model).

A drafter folder holds `config.json` and `model.safetensors` (or `pytorch_model.bin`, read with
torch.load(weights_only=True)). Producers name the same weights differently; every layout is
mapped to SpecForge's names (specforge/modeling/draft/llama3_eagle.py, LlamaForCausalLMEagle3):

    embed_tokens.weight [V, H]          (optional: else the target's, read from --model)
    fc.weight [H, k*Ht]                 (Ht = target_hidden_size; SpecForge fixes k = 3)
    midlayer.input_layernorm.weight     (applied to the token embedding)
    midlayer.hidden_norm.weight         (applied to the projected target state)
    midlayer.self_attn.{q,k,v}_proj.weight [.., 2H], o_proj.weight
    midlayer.post_attention_layernorm.weight, midlayer.mlp.{gate,up,down}_proj.weight
    norm.weight, lm_head.weight [draft_vocab, H], d2t [draft_vocab] (offsets), t2d [V] bool

speculators (vllm-project/speculators, Eagle3Speculator) writes the decoder layer as `layers.0.*`
and its config nests the layer settings in `transformer_layer_config`; ModelOpt keeps its draft
under `eagle_module.` with the head as `eagle_lm_head`. Both are renamed below (KEY_RULES).

The target model is never loaded: `embed_tokens` and the LM head are taken from its safetensors
shards by name (through model.safetensors.index.json), as memory-mapped views.

torch and stdlib only: shipped to the remote box by the agent.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from eagle3_tui.engines.read.safetensors_file import looks_like_safetensors, read_safetensors
from eagle3_tui.engines.read.sample import SampleError


class DrafterError(SampleError):
    """A folder that cannot be used as an EAGLE-3 drafter. The message is one line."""


#: (prefix in the file, SpecForge prefix), first match wins; applied to every key
KEY_RULES = (
    ("model.layers.0.", "midlayer."),  # speculators inside a `model.` wrapper
    ("layers.0.", "midlayer."),  # speculators
    ("eagle_module.layers.0.", "midlayer."),  # ModelOpt
    ("eagle_module.", ""),  # ModelOpt: fc, norm, d2t, embed_tokens ...
    ("eagle_lm_head.", "lm_head."),  # ModelOpt
    ("model.", ""),  # any producer that wraps everything in `model.`
)

REQUIRED = (
    "fc.weight",
    "midlayer.input_layernorm.weight",
    "midlayer.hidden_norm.weight",
    "midlayer.self_attn.q_proj.weight",
    "midlayer.self_attn.k_proj.weight",
    "midlayer.self_attn.v_proj.weight",
    "midlayer.self_attn.o_proj.weight",
    "midlayer.post_attention_layernorm.weight",
    "midlayer.mlp.gate_proj.weight",
    "midlayer.mlp.up_proj.weight",
    "midlayer.mlp.down_proj.weight",
    "norm.weight",
    "lm_head.weight",
)

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
#: names of the target's input embedding and LM head in HF checkpoints
EMBED_NAMES = ("model.embed_tokens.weight", "model.language_model.embed_tokens.weight", "embed_tokens.weight",
               "transformer.wte.weight")
HEAD_NAMES = ("lm_head.weight", "model.lm_head.weight", "language_model.lm_head.weight")


@dataclass
class Drafter:
    path: str
    layout: str  # "SpecForge" | "speculators" | "ModelOpt"
    hidden: int  # the drafter's own width H
    target_hidden: int  # Ht: width of one target hidden state
    k: int  # number of aux states fc expects (fc in-width = k * Ht)
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    draft_vocab: int
    eps: float
    rope_theta: float
    rope_scaling: dict | None
    norm_output: bool  # SpecForge compute_logits: norm again before lm_head (default True)
    weights: dict[str, Any] = field(repr=False)  # SpecForge names -> tensors
    embed_from: str = "drafter"  # "drafter" or the target shard it came from
    notes: list[str] = field(default_factory=list)
    #: rotary cos/sin rows for positions 0..n-1, kept across samples (engines/model/accept.py rope_rows)
    rope: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def fc_width(self) -> int:
        return self.k * self.target_hidden

    def describe(self) -> dict[str, Any]:
        return {"path": self.path, "layout": self.layout, "hidden": self.hidden,
                "target_hidden": self.target_hidden, "k": self.k, "heads": self.heads,
                "kv_heads": self.kv_heads, "vocab": self.vocab, "draft_vocab": self.draft_vocab,
                "embed_from": self.embed_from, "notes": list(self.notes)}


def load_drafter(path: str, model: str | None = None) -> Drafter:
    """The drafter in folder `path`; `model` (a target HF folder) supplies a missing embed_tokens."""
    config = _read_config(path)
    weights, layout = _read_weights(path)
    layout = _layout(config, layout)
    missing = [k for k in REQUIRED if k not in weights]
    if missing:
        raise DrafterError(f"{path}: not an EAGLE-3 drafter: weights lack {', '.join(missing[:3])}"
                           + (f" and {len(missing) - 3} more" if len(missing) > 3 else ""))
    layer = config.get("transformer_layer_config") if isinstance(config.get("transformer_layer_config"), dict) else {}
    cfg = {**config, **layer}

    fc = weights["fc.weight"]
    hidden = int(fc.shape[0])
    target_hidden = int(cfg.get("target_hidden_size") or hidden)
    if fc.dim() != 2 or fc.shape[1] % target_hidden:
        raise DrafterError(f"{path}: fc.weight is {list(fc.shape)}, not [H, k*{target_hidden}] "
                           f"(target_hidden_size {target_hidden})")
    k = int(fc.shape[1]) // target_hidden
    heads = int(cfg.get("num_attention_heads") or 0)
    if heads < 1:
        raise DrafterError(f"{path}: config.json lacks num_attention_heads")
    head_dim = int(cfg.get("head_dim") or hidden // heads)
    q = weights["midlayer.self_attn.q_proj.weight"]
    kproj = weights["midlayer.self_attn.k_proj.weight"]
    if q.shape[1] != 2 * hidden or q.shape[0] != heads * head_dim or kproj.shape[0] % head_dim:
        raise DrafterError(f"{path}: attention weights {list(q.shape)} do not fit an EAGLE-3 layer of width "
                           f"{hidden} with {heads} heads of {head_dim} (q_proj must take 2H = {2 * hidden})")
    kv_heads = int(kproj.shape[0]) // head_dim
    lm_head = weights["lm_head.weight"]
    draft_vocab = int(lm_head.shape[0])
    vocab = int(cfg.get("vocab_size") or draft_vocab)
    if "d2t" not in weights:
        if draft_vocab != vocab:
            raise DrafterError(f"{path}: draft vocabulary {draft_vocab} != vocab_size {vocab} and no d2t mapping")
        import torch

        weights["d2t"] = torch.zeros(draft_vocab, dtype=torch.int64)
    rope_theta, rope_scaling = _rope(cfg)
    drafter = Drafter(
        path=path, layout=layout, hidden=hidden, target_hidden=target_hidden, k=k, heads=heads,
        kv_heads=kv_heads, head_dim=head_dim, vocab=vocab, draft_vocab=draft_vocab,
        eps=float(cfg.get("rms_norm_eps") or 1e-6), rope_theta=rope_theta, rope_scaling=rope_scaling,
        norm_output=bool(cfg.get("norm_output", True)), weights=weights,
    )
    if "embed_tokens.weight" not in weights:
        if model is None:
            raise DrafterError(f"{path}: the drafter has no embed_tokens; give --model with the target's folder "
                               "to take them from there")
        weights["embed_tokens.weight"], drafter.embed_from = read_target_tensor(model, EMBED_NAMES, "embed_tokens")
    emb = weights["embed_tokens.weight"]
    if emb.dim() != 2 or emb.shape[1] != hidden:
        raise DrafterError(f"embed_tokens is {list(emb.shape)}, the drafter's width is {hidden}")
    return drafter


def _read_config(path: str) -> dict[str, Any]:
    if not os.path.isdir(path):
        raise DrafterError(f"{path}: not a folder (a drafter is a folder with config.json and weights)")
    cfg_path = os.path.join(path, "config.json")
    try:
        with open(cfg_path, encoding="utf-8") as fh:
            config = json.load(fh)
    except FileNotFoundError:
        raise DrafterError(f"{path}: not a drafter folder (no config.json)") from None
    except (OSError, ValueError) as err:
        raise DrafterError(f"{cfg_path}: unreadable config ({str(err).splitlines()[0][:120]})") from None
    if not isinstance(config, dict):
        raise DrafterError(f"{cfg_path}: not a JSON object")
    return config


def _read_weights(path: str) -> tuple[dict[str, Any], str]:
    """SpecForge-named tensors and the layout the names came in."""
    for name in WEIGHT_FILES:
        file = os.path.join(path, name)
        if os.path.isfile(file):
            break
    else:
        raise DrafterError(f"{path}: no drafter weights (looked for {' or '.join(WEIGHT_FILES)})")
    raw = _read_tensor_file(file)
    weights: dict[str, Any] = {}
    layout = "SpecForge"
    for key, tensor in raw.items():
        new = key
        for old, repl in KEY_RULES:
            if key.startswith(old):
                new = repl + key[len(old):]
                if old.startswith("eagle"):
                    layout = "ModelOpt"
                elif "layers.0." in old:
                    layout = "speculators"
                break
        weights[new] = tensor
    return weights, layout


def _read_tensor_file(file: str) -> dict[str, Any]:
    from eagle3_tui.engines.read.load import read_object

    with open(file, "rb") as fh:
        head = fh.read(16)
    if looks_like_safetensors(head, os.path.getsize(file)):
        tensors, _meta = read_safetensors(file)
        return tensors
    try:
        obj, _ = read_object(file)  # torch.load(weights_only=True), same checks as samples
    except SampleError as err:
        raise DrafterError(f"{file}: {err}") from None
    if not isinstance(obj, dict) or not all(hasattr(v, "shape") for v in obj.values()):
        raise DrafterError(f"{file}: not a state dict of tensors")
    return obj


def _layout(config: dict[str, Any], from_keys: str) -> str:
    archs = config.get("architectures") or []
    if config.get("speculators_model_type") or any("Speculator" in str(a) for a in archs):
        return "speculators"
    return from_keys


def _rope(cfg: dict[str, Any]) -> tuple[float, dict | None]:
    params = cfg.get("rope_parameters")
    if isinstance(params, dict) and "rope_theta" in params:
        return float(params["rope_theta"]), params
    scaling = cfg.get("rope_scaling")
    return float(cfg.get("rope_theta") or 10000.0), scaling if isinstance(scaling, dict) else None


# --------------------------------------------------------------------------- the target model


def read_target_tensor(model: str, names: tuple[str, ...], what: str) -> tuple[Any, str]:
    """One tensor of the target model, by name, as a memory-mapped view of its shard."""
    shard = _find_shard(model, names)
    if shard is None:
        raise DrafterError(f"{model}: no {what} in the model's safetensors ({' / '.join(names[:2])} not found)")
    file, name = shard
    tensors, _meta = read_safetensors(file)  # header + mmap: only the pages we touch are read
    return tensors[name], f"{os.path.basename(file)}:{name}"


def _find_shard(model: str, names: tuple[str, ...]) -> tuple[str, str] | None:
    if not os.path.isdir(model):
        raise DrafterError(f"{model}: --model is not a folder")
    index = os.path.join(model, "model.safetensors.index.json")
    if os.path.isfile(index):
        try:
            with open(index, encoding="utf-8") as fh:
                weight_map = json.load(fh)["weight_map"]
        except (OSError, ValueError, KeyError, TypeError):
            raise DrafterError(f"{index}: unreadable shard index") from None
        for name in names:
            if name in weight_map:
                return os.path.join(model, str(weight_map[name])), name
        return None
    single = os.path.join(model, "model.safetensors")
    if os.path.isfile(single):
        header = _safetensors_header(single)
        for name in names:
            if name in header:
                return single, name
        return None
    raise DrafterError(f"{model}: no model.safetensors or model.safetensors.index.json")


def _safetensors_header(file: str) -> dict[str, Any]:
    import struct

    with open(file, "rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        try:
            return json.loads(fh.read(n))
        except ValueError:
            raise DrafterError(f"{file}: corrupt safetensors header") from None


def target_config(model: str) -> dict[str, Any]:
    try:
        with open(os.path.join(model, "config.json"), encoding="utf-8") as fh:
            cfg = json.load(fh)
    except (OSError, ValueError):
        return {}
    return cfg if isinstance(cfg, dict) else {}


def read_target_head(model: str) -> tuple[Any, str]:
    """The target's LM head [V, Ht]: lm_head.weight, or the embedding when the config ties them."""
    cfg = target_config(model)
    shard = _find_shard(model, HEAD_NAMES)
    if shard is None and cfg.get("tie_word_embeddings", False):
        return read_target_tensor(model, EMBED_NAMES, "tied embed_tokens (LM head)")
    if shard is None:
        raise DrafterError(f"{model}: no lm_head.weight in the model's safetensors and tie_word_embeddings is off")
    return read_target_tensor(model, HEAD_NAMES, "lm_head")


def read_vocab(model: str | None) -> dict[int, str] | None:
    """id -> token text from the target's tokenizer.json (stdlib only; None when absent)."""
    if not model:
        return None
    try:
        with open(os.path.join(model, "tokenizer.json"), encoding="utf-8") as fh:
            tok = json.load(fh)
    except (OSError, ValueError):
        return None
    out: dict[int, str] = {}
    vocab = (tok.get("model") or {}).get("vocab")
    if isinstance(vocab, dict):
        out = {int(i): str(t) for t, i in vocab.items()}
    elif isinstance(vocab, list):  # Unigram: [[piece, score], ...]
        out = {i: str(p[0]) for i, p in enumerate(vocab) if isinstance(p, list) and p}
    for added in tok.get("added_tokens") or []:
        if isinstance(added, dict) and "id" in added:
            out[int(added["id"])] = str(added.get("content", ""))
    return out
