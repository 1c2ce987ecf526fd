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

import math
import os
from dataclasses import dataclass, field
from typing import Any

from eagle3_tui.engines.model.folder_config import (
    FolderConfigError,
    drafter_values,
    model_tied,
    read_model_config,
    safetensors_header,
    tokenizer_vocab,
)
from eagle3_tui.engines.model.vocab import VocabError, check_offsets, mapping_from
from eagle3_tui.engines.read.json_file import TOKENIZER_LIMIT, JsonFileError, NoJsonFile, open_regular, read_json_file
from eagle3_tui.engines.read.load import read_object
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
    """The drafter in folder `path`; `model` (a target HF folder) supplies a missing embed_tokens.
    The model's config goes through the same checked reader as identify's (folder_config)."""
    if model is not None:
        read_model_config(model)
    config = _read_config(path)
    weights, layout = _read_weights(path)
    layout = _layout(config, layout)
    missing = [k for k in REQUIRED if k not in weights]
    if missing:
        raise DrafterError(f"{path}: not an EAGLE-3 drafter: weights lack {', '.join(missing[:3])}"
                           + (f" and {len(missing) - 3} more" if len(missing) > 3 else ""))
    layer = config.get("transformer_layer_config") if isinstance(config.get("transformer_layer_config"), dict) else {}
    cfg = {**config, **layer}

    values = _values(path, cfg)
    fc = weights["fc.weight"]
    hidden = int(fc.shape[0])
    target_hidden = values.target_hidden or hidden
    if fc.dim() != 2 or fc.shape[1] % target_hidden:
        raise DrafterError(f"{path}: fc.weight is {list(fc.shape)}, not [H, k*{target_hidden}] "
                           f"(target_hidden_size {target_hidden})")
    k = int(fc.shape[1]) // target_hidden
    heads = values.heads
    head_dim = values.head_dim or hidden // heads
    q = weights["midlayer.self_attn.q_proj.weight"]
    kproj = weights["midlayer.self_attn.k_proj.weight"]
    if head_dim < 1 or q.shape[1] != 2 * hidden or q.shape[0] != heads * head_dim or kproj.shape[0] % head_dim:
        raise DrafterError(f"{path}: attention weights {list(q.shape)} do not fit an EAGLE-3 layer of width "
                           f"{hidden} with {heads} heads of {head_dim} (q_proj must take 2H = {2 * hidden})")
    kv_heads = int(kproj.shape[0]) // head_dim
    draft_vocab = int(weights["lm_head.weight"].shape[0])
    vocab = values.vocab or draft_vocab
    check_vocab_maps(path, weights, vocab, draft_vocab, values.draft_vocab)
    check_finite(path, weights)
    drafter = Drafter(
        path=path, layout=layout, hidden=hidden, target_hidden=target_hidden, k=k, heads=heads,
        kv_heads=kv_heads, head_dim=head_dim, vocab=vocab, draft_vocab=draft_vocab,
        eps=values.eps, rope_theta=values.rope_theta, rope_scaling=values.rope_scaling,
        norm_output=values.norm_output, weights=weights,
    )
    if "embed_tokens.weight" not in weights:
        if model is None:
            raise DrafterError(f"{path}: the drafter has no embed_tokens; give --model with the target's folder "
                               "to take them from there")
        weights["embed_tokens.weight"], drafter.embed_from = read_target_tensor(model, EMBED_NAMES, "embed_tokens")
    emb = weights["embed_tokens.weight"]
    if emb.dim() != 2 or emb.shape[1] != hidden:
        raise DrafterError(f"embed_tokens is {list(emb.shape)}, the drafter's width is {hidden}")
    if emb.shape[0] < vocab:
        raise DrafterError(f"{path}: embed_tokens has {emb.shape[0]} rows but vocab_size is {vocab}")
    return drafter


def _values(path: str, cfg: dict[str, Any]):
    try:
        return drafter_values(path, cfg)
    except FolderConfigError as err:
        raise DrafterError(str(err)) from None


def check_vocab_maps(path: str, weights: dict[str, Any], vocab: int, draft_vocab: int, said: int | None) -> None:
    """d2t (and t2d when the drafter has one) checked as a vocab_mapping.pt is (engines/model/vocab.py):
    offsets that land inside the target vocabulary, on the ids t2d marks; draft_vocab_size and
    the sizes of d2t and t2d agree with lm_head and vocab_size. A drafter without d2t proposes
    target ids directly: its head must cover the whole vocabulary."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if said is not None and said != draft_vocab:
        raise DrafterError(f"{path}: config.json draft_vocab_size = {said} but lm_head has {draft_vocab} rows")
    if "d2t" not in weights:
        if draft_vocab != vocab:
            raise DrafterError(f"{path}: draft vocabulary {draft_vocab} != vocab_size {vocab} and no d2t mapping")
        weights["d2t"] = torch.zeros(draft_vocab, dtype=torch.int64)
        return
    d2t = weights["d2t"]
    try:
        if d2t.dim() != 1 or d2t.numel() != draft_vocab or d2t.is_floating_point():
            raise VocabError(f"{path}: d2t is {list(d2t.shape)} {str(d2t.dtype).removeprefix('torch.')}, "
                             f"not {draft_vocab} whole-number offsets (one per lm_head row)")
        if "t2d" in weights:
            t2d = weights["t2d"]
            if t2d.dim() != 1 or t2d.numel() != vocab:
                raise VocabError(f"{path}: t2d has {t2d.numel()} entries, vocab_size is {vocab}")
            mapping_from({"d2t": d2t, "t2d": t2d}, path)
        else:
            check_offsets(d2t, vocab, path)
    except VocabError as err:
        raise DrafterError(str(err)) from None


def check_finite(path: str, weights: dict[str, Any]) -> None:
    """Weights with NaN or Inf draft nothing (every score NaN): said once, by name, at load. A
    float64 sum per tensor: no temporary as large as the tensor."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    for name, t in weights.items():
        if t.is_floating_point() and t.numel() and not math.isfinite(float(t.sum(dtype=torch.float64))):
            raise DrafterError(f"{path}: the drafter's weights hold NaN or Inf ({name}): it cannot draft")


def _read_config(path: str) -> dict[str, Any]:
    if not os.path.isdir(path):
        raise DrafterError(f"{path}: not a folder (a drafter is a folder with config.json and weights)")
    cfg_path = os.path.join(path, "config.json")
    try:
        config = read_json_file(cfg_path)
    except NoJsonFile:
        raise DrafterError(f"{path}: not a drafter folder (no config.json)") from None
    except JsonFileError as err:
        raise DrafterError(f"unreadable config: {err}") from None
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
    try:
        with open_regular(file) as fh:
            head = fh.read(16)
    except JsonFileError as err:
        raise DrafterError(str(err)) from None
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
            weight_map = read_json_file(index)["weight_map"]
        except (JsonFileError, KeyError, TypeError):
            raise DrafterError(f"{index}: unreadable shard index") from None
        for name in names:
            if name in weight_map:
                return os.path.join(model, str(weight_map[name])), name
        return None
    single = os.path.join(model, "model.safetensors")
    if os.path.isfile(single):
        header = safetensors_header(single)
        for name in names:
            if name in header:
                return single, name
        return None
    raise DrafterError(f"{model}: no model.safetensors or model.safetensors.index.json")


def read_target_head(model: str) -> tuple[Any, str]:
    """The target's LM head [V, Ht]: lm_head.weight, or the embedding when the config ties them."""
    shard = _find_shard(model, HEAD_NAMES)
    if shard is None and model_tied(model):
        return read_target_tensor(model, EMBED_NAMES, "tied embed_tokens (LM head)")
    if shard is None:
        raise DrafterError(f"{model}: no lm_head.weight in the model's safetensors and tie_word_embeddings is off")
    return read_target_tensor(model, HEAD_NAMES, "lm_head")


def read_vocab(model: str | None) -> dict[int, str] | None:
    """id -> token text from the target's tokenizer.json (stdlib only; None when absent)."""
    if not model:
        return None
    try:
        tok = read_json_file(os.path.join(model, "tokenizer.json"), TOKENIZER_LIMIT)
    except JsonFileError:
        return None
    return tokenizer_vocab(os.path.join(model, "tokenizer.json"), tok)
