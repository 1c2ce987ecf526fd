"""Load an EAGLE-3 drafter folder (and, when asked, one or two tensors of its target model).

A drafter folder holds `config.json` and `model.safetensors` (or `pytorch_model.bin`, read with
torch.load(weights_only=True)). Producers name the same weights differently; every layout is
mapped to SpecForge's names (specforge/modeling/draft/llama3_eagle.py, LlamaForCausalLMEagle3):

    embed_tokens.weight [V, H]          (optional: else the target's, read from --model)
    input_norm.weight [k*Ht]            (norm_before_fc: one RMSNorm over the concatenation)
    fc_norm.{0..k-1}.weight [Ht]        (fc_norm: one RMSNorm per aux state)
    fc.weight [H, k*Ht]                 (Ht = target_hidden_size; k aux states, 3 in SpecForge)
    midlayer.input_layernorm.weight     (applied to the token embedding)
    midlayer.hidden_norm.weight         (applied to the projected target state)
    midlayer.self_attn.{q,k,v}_proj.weight [.., 2H], o_proj.weight
    midlayer.post_attention_layernorm.weight, midlayer.mlp.{gate,up,down}_proj.weight
    layers.{1..N-1}.*                   (later decoder layers: q/k/v take H; hidden_norm or
                                         input_layernorm before attention)
    norm.weight, lm_head.weight [draft_vocab, H], d2t [draft_vocab] (offsets), t2d [V] bool

Which of these the forward applies follows the config (engines/model/drafter_shape.py, with the
producers' and engines' lines); a weight it would not apply stops the load, named.

speculators (vllm-project/speculators, Eagle3Speculator) writes the decoder layers as `layers.i.*`
and its config nests the layer settings in `transformer_layer_config`; ModelOpt keeps its draft
under `eagle_module.` with the head as `eagle_lm_head`. Both are renamed below (KEY_RULES), as are
SGLang's legacy `aux_norm_low/mid/high` (fc_norm.0/1/2, sglang 0.5.23 llama_eagle3.py 338-343).

The target model is never loaded: `embed_tokens` and the LM head are taken from its safetensors
shards by name (through model.safetensors.index.json), as memory-mapped views.

torch and stdlib only: shipped to the remote box by the agent.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eagle3_tui.engines.model.drafter_shape import Shape, check_names, layer_prefix, read_shape
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
from eagle3_tui.engines.results.accept import DrafterInfo

if TYPE_CHECKING:
    from torch import Tensor  # the weights; torch itself is imported where they are read


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
#: SGLang's legacy fc_norm names (sglang 0.5.23 llama_eagle3.py 338-343)
LEGACY_NAMES = {"aux_norm_low.": "fc_norm.0.", "aux_norm_mid.": "fc_norm.1.", "aux_norm_high.": "fc_norm.2."}


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
    shape: Shape  # layers, fc_norm, norm_before_fc, what norm_output means (drafter_shape.py)
    weights: dict[str, Tensor] = field(repr=False)  # SpecForge names -> tensors
    embed_from: str = "drafter"  # "drafter" or the target shard it came from
    notes: list[str] = field(default_factory=list)
    #: rotary cos/sin rows for positions 0..n-1, kept across samples (engines/model/draft_forward.py rope_rows)
    rope: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def fc_width(self) -> int:
        return self.k * self.target_hidden

    @property
    def words(self) -> str:
        """'SpecForge, 1 layer, fc_norm, 3 aux states, draft vocab 4096': said on every output."""
        return self.shape.words(self.layout, self.k, self.draft_vocab)

    def describe(self) -> DrafterInfo:
        sh = self.shape
        return {"path": self.path, "layout": self.layout, "shape": self.words, "layers": sh.layers,
                "hidden": self.hidden, "target_hidden": self.target_hidden, "k": self.k, "heads": self.heads,
                "kv_heads": self.kv_heads, "vocab": self.vocab, "draft_vocab": self.draft_vocab,
                "fc_norm": sh.fc_norm, "norm_before_fc": sh.norm_before_fc,
                "norm_before_residual": sh.norm_before_residual, "logits_normed": sh.logits_normed,
                "feed_normed": sh.feed_normed, "embed_from": self.embed_from, "notes": list(self.notes)}


def load_drafter(path: str, model: str | None = None) -> Drafter:
    """The drafter in folder `path`; `model` (a target HF folder) supplies a missing embed_tokens.
    The model's config goes through the same checked reader as identify's (folder_config)."""
    if model is not None:
        read_model_config(model)
    config = _read_config(path)
    weights, layout = _read_weights(path)
    layout = layout_of(config, layout)
    if "fc.weight" not in weights or "lm_head.weight" not in weights:
        lack = [n for n in ("fc.weight", "lm_head.weight") if n not in weights]
        raise DrafterError(f"{path}: not an EAGLE-3 drafter: weights lack {', '.join(lack)}")
    cfg = merged_config(config)

    values = _values(path, cfg)
    fc = weights["fc.weight"]
    hidden = int(fc.shape[0])
    target_hidden = values.target_hidden or hidden
    k, shape, notes = _shape(path, cfg, weights, layout, list(fc.shape), target_hidden)
    heads = values.heads
    head_dim = values.head_dim or hidden // heads
    kv_heads = _check_layers(path, weights, shape, hidden, heads, head_dim)
    draft_vocab = int(weights["lm_head.weight"].shape[0])
    vocab = values.vocab or draft_vocab
    check_vocab_maps(path, weights, vocab, draft_vocab, values.draft_vocab)
    check_finite(path, weights)
    drafter = Drafter(
        path=path, layout=layout, hidden=hidden, target_hidden=target_hidden, k=k, heads=heads,
        kv_heads=kv_heads, head_dim=head_dim, vocab=vocab, draft_vocab=draft_vocab,
        eps=values.eps, rope_theta=values.rope_theta, rope_scaling=values.rope_scaling,
        shape=shape, weights=weights, notes=notes,
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


def merged_config(config: dict[str, Any]) -> dict[str, Any]:
    """speculators' transformer_layer_config over the top level (the values the layers use)."""
    layer = config.get("transformer_layer_config")
    return {**config, **(layer if isinstance(layer, dict) else {})}


def fc_aux(path: str, fc_shape: list[int], target_hidden: int, shape: Shape) -> int:
    """k, the aux states fc takes: its in-width over target_hidden_size, which must agree with
    the count the config names (SGLang and vLLM size fc from that count)."""
    if len(fc_shape) != 2 or fc_shape[1] % target_hidden:
        raise DrafterError(f"{path}: fc.weight is {fc_shape}, not [H, k*{target_hidden}] "
                           f"(target_hidden_size {target_hidden})")
    k = fc_shape[1] // target_hidden
    if shape.aux is not None and shape.aux != k:
        raise DrafterError(f"{path}: fc.weight takes {k} aux states of {target_hidden} ({fc_shape[1]} columns) but "
                           f"config.json {shape.aux_key} names {shape.aux}")
    return k


def _shape(path: str, cfg: dict[str, Any], weights: dict[str, Tensor], layout: str, fc_shape: list[int],
           target_hidden: int) -> tuple[int, Shape, list[str]]:
    """(k, the forward's shape, notes); every weight applied or the load stops naming it."""
    names = set(weights)
    try:
        shape = read_shape(path, cfg, names, specforge=layout == "SpecForge")
        k = fc_aux(path, fc_shape, target_hidden, shape)
        notes = check_names(path, shape, names, k)
    except FolderConfigError as err:
        raise DrafterError(str(err)) from None
    for i in range(1, shape.layers):
        a, b = layer_prefix(i) + "input_layernorm.weight", layer_prefix(i) + "hidden_norm.weight"
        if a in weights and b in weights and not bool((weights[a] == weights[b]).all()):
            raise DrafterError(f"{path}: layer {i} holds both {b} and {a}, and they differ: SGLang 0.5.23 applies "
                               "hidden_norm there, vLLM 0.34.0 input_layernorm; refusing to pick one")
    for n in sorted(names):
        if n.startswith("fc_norm.") or n == "input_norm.weight":
            want = target_hidden if n.startswith("fc_norm.") else k * target_hidden
            if list(weights[n].shape) != [want]:
                raise DrafterError(f"{path}: {n} is {list(weights[n].shape)}, not [{want}]")
    return k, shape, notes


def _check_layers(path: str, weights: dict[str, Tensor], shape: Shape, hidden: int, heads: int, head_dim: int) -> int:
    """kv heads; every layer's attention fits (q/k/v take 2H in layer 0, H after)."""
    kv_heads = 0
    for i in range(shape.layers):
        p = layer_prefix(i)
        width = 2 * hidden if i == 0 else hidden
        q, kproj = weights[p + "self_attn.q_proj.weight"], weights[p + "self_attn.k_proj.weight"]
        if head_dim < 1 or q.shape[1] != width or q.shape[0] != heads * head_dim or kproj.shape[0] % head_dim \
                or kproj.shape[1] != width or (kv_heads and kproj.shape[0] // head_dim != kv_heads):
            raise DrafterError(f"{path}: attention weights {list(q.shape)} do not fit an EAGLE-3 layer of width "
                               f"{hidden} with {heads} heads of {head_dim} ({p}q_proj must take "
                               f"{'2H = ' if i == 0 else 'H = '}{width})")
        kv_heads = int(kproj.shape[0]) // head_dim
    return kv_heads


def _values(path: str, cfg: dict[str, Any]):
    try:
        return drafter_values(path, cfg)
    except FolderConfigError as err:
        raise DrafterError(str(err)) from None


def check_vocab_maps(path: str, weights: dict[str, Tensor], vocab: int, draft_vocab: int, said: int | None) -> None:
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


def check_finite(path: str, weights: dict[str, Tensor]) -> None:
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


def _read_weights(path: str) -> tuple[dict[str, Tensor], str]:
    """SpecForge-named tensors and the layout the names came in."""
    for name in WEIGHT_FILES:
        file = os.path.join(path, name)
        if os.path.isfile(file):
            break
    else:
        raise DrafterError(f"{path}: no drafter weights (looked for {' or '.join(WEIGHT_FILES)})")
    raw = _read_tensor_file(file)
    weights: dict[str, Tensor] = {}
    layout = "SpecForge"
    for key, tensor in raw.items():
        new, kind = specforge_name(key)
        layout = kind or layout
        weights[new] = tensor
    return weights, layout


def specforge_name(key: str) -> tuple[str, str | None]:
    """(SpecForge's name of a weight, the layout its name tells: "ModelOpt", "speculators" or None)."""
    new, layout = key, None
    for old, repl in KEY_RULES:
        if key.startswith(old):
            new = repl + key[len(old):]
            if old.startswith("eagle"):
                layout = "ModelOpt"
            elif "layers.0." in old:
                layout = "speculators"
            break
    for old, repl in LEGACY_NAMES.items():
        if new.startswith(old):
            new = repl + new[len(old):]
    return new, layout


def _read_tensor_file(file: str) -> dict[str, Tensor]:
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


def layout_of(config: dict[str, Any], from_keys: str) -> str:
    archs = config.get("architectures")
    archs = archs if isinstance(archs, list) else [archs]  # a number there is no list to go through
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
