"""What an EAGLE-3 drafter's forward applies, from its config.json and its weight names alone
(no tensor read, no torch: the TUI's start-up check runs it too). A weight the forward would not
apply is named with the config keys that decide it, never scored in silence.

Read from the producers' and the engines' own code (names below are SpecForge's, engines/model/
drafter.py KEY_RULES; layer 0 is `midlayer.`, later layers `layers.i.`):

- SpecForge 0.2.0, specforge/modeling/draft/llama3_eagle.py, LlamaForCausalLMEagle3: one layer
  (`midlayer`), 3 aux states; `fc_norm` true adds one RMSNorm per aux state before fc
  (`fc_norm.0..2.weight`, lines 1679-1687 and 1763-1769); `norm_output` false takes the logits
  without the final norm (1690, 1771-1776; default true). The next step always gets the
  pre-norm output (algorithms/eagle3/model.py, `hidden_states = hidden_states_out`).
- SGLang 0.5.23, sglang/srt/models/llama_eagle3.py: aux states = num_aux_hidden_states, else
  len(eagle_config.eagle_aux_hidden_state_layer_ids), else 3 (156-161), fc of that many x
  target_hidden_size (163-167); `norm_before_fc` (eagle_config's, else the top level) is one
  RMSNorm `input_norm` over the concatenation (169-182), applied before `fc_norm` (or the
  legacy `use_aux_norm`), one RMSNorm per chunk (184-196, 238-247); num_hidden_layers decoder
  layers (198-204): layer 0 feeds [input_layernorm(embeds), hidden_norm(h)] to a 2H attention
  with h as residual (97-102), a later layer takes hidden_norm(h) of H (103-105); the output of
  the last is normed for the logits and passed on pre-norm unless norm_output (263-269, default
  false: 207). Legacy names midlayer -> layers.0, aux_norm_low/mid/high -> fc_norm.0/1/2
  (338-343).
- vLLM 0.34.0, vllm/model_executor/models/llama_eagle3.py: the same input_norm, fc_norm, aux
  count and norm_output (184-188, 209-240, 252, 283-288, 396-409); a later layer normalises with
  input_layernorm (136-138) where SGLang uses hidden_norm; `norm_before_residual` makes layer 0's
  residual the normed h (101-104, 110-115). speculators 0.9.0 (models/eagle3/core.py 75-100,
  model_definitions.py 14-110) trains the same: later layers are plain decoder layers
  (input_layernorm), norm_output feeds the post-norm state to the next step (config.py).

So `norm_output` means two things: in a SpecForge folder (`midlayer.*`) the logits without the
final norm; in the others (the engines' and speculators' reading) the post-norm state fed back.
A later layer holding only one of hidden_norm / input_layernorm uses it; holding both, they
must be equal (drafter.py checks the values), since SGLang applies one and vLLM the other.

Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from eagle3_tui.engines.model.folder_config import FolderConfigError, flag, mapping, shown, whole

#: names in a drafter file that are not part of the draft forward in any engine: said in a note
NOT_DRAFTING = {
    "t2d": "",  # checked with d2t (vocab.py), used by no forward
    "verifier_lm_head.weight": "the target's LM head, kept by speculators for training",
    "verifier_norm.weight": "the target's final norm, kept by speculators for training",
    "mask_hidden": "P-EAGLE's parallel-drafting weight (vLLM 0.34.0 skips it too, llama_eagle3.py 421-427)",
}

ATTENTION = ("self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
             "self_attn.o_proj.weight")
MLP = ("post_attention_layernorm.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight")
_LAYER = re.compile(r"^(?:midlayer|layers\.(\d+))\.")
MAX_DRAFT_LAYERS = 64


def layer_prefix(i: int) -> str:
    return "midlayer." if i == 0 else f"layers.{i}."


@dataclass(frozen=True)
class Shape:
    layers: int
    layers_key: str  # where the count came from: "num_hidden_layers" or "the weights"
    aux: int | None  # aux states the config names (None: not said; fc's width decides)
    aux_key: str | None
    fc_norm: bool
    fc_norm_key: str
    norm_before_fc: bool
    norm_before_residual: bool
    norm_output: bool  # the config's value (SpecForge default true, the engines' false)
    norm_output_said: bool  # norm_output is in config.json
    specforge_norm_output: bool  # SpecForge's meaning (logits without the norm), else the engines'
    #: per layer >= 1: the weight name (after the layer prefix) of its pre-attention norm
    later_norms: tuple[str, ...]

    @property
    def logits_normed(self) -> bool:
        return self.norm_output if self.specforge_norm_output else True

    @property
    def feed_normed(self) -> bool:
        return False if self.specforge_norm_output else self.norm_output

    def weights(self, k: int) -> list[str]:
        """Every weight the forward applies, for k aux states."""
        names = ["embed_tokens.weight", "fc.weight", "norm.weight", "lm_head.weight"]
        if self.norm_before_fc:
            names.append("input_norm.weight")
        if self.fc_norm:
            names += [f"fc_norm.{i}.weight" for i in range(k)]
        for i in range(self.layers):
            p = layer_prefix(i)
            norms = ("input_layernorm.weight", "hidden_norm.weight") if i == 0 else (self.later_norms[i - 1],)
            names += [p + n for n in (*norms, *ATTENTION, *MLP)]
        return names

    def words(self, layout: str, k: int, draft_vocab: int) -> str:
        """'SpecForge, 1 layer, fc_norm, 3 aux states, draft vocab 4096'"""
        parts = [layout, f"{self.layers} layer{'s' if self.layers != 1 else ''}"]
        if self.norm_before_fc:
            parts.append("norm_before_fc")
        if self.fc_norm:
            parts.append("fc_norm")
        if self.norm_before_residual:
            parts.append("norm_before_residual")
        if self.norm_output_said and self.norm_output != self.specforge_norm_output:
            parts.append("logits without the final norm" if self.specforge_norm_output
                         else "norm_output (post-norm state fed back)")
        parts.append(f"{k} aux state{'s' if k != 1 else ''}")
        parts.append(f"draft vocab {draft_vocab}")
        return ", ".join(parts)


def layer_indices(names: set[str] | list[str]) -> set[int]:
    out = set()
    for n in names:
        i = layer_index(n)
        if i is not None:
            out.add(i)
    return out


def layer_index(name: str) -> int | None:
    """The layer a weight name is in (`midlayer.`: 0, `layers.i.`: i), None for a name outside
    the layers. An index of more than 18 digits is read as _FAR (past any cap; int() of a name's
    thousands of digits would be slow, or refused past 4,300)."""
    m = _LAYER.match(name)
    if not m:
        return None
    digits = (m.group(1) or "0").lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else _FAR


_FAR = 10**18


def _layers_named(where: str, names: set[str]) -> int:
    """The layer count the weights name (the highest layer index + 1) when config.json says none:
    refused past MAX_DRAFT_LAYERS, before anything is sized by it (the forward's weight list and
    per-layer norms grow with it: `layers.50000000.*` took 3.5 GB)."""
    top, name = max(((i, n) for n in names if (i := layer_index(n)) is not None), default=(0, ""))
    if top >= MAX_DRAFT_LAYERS:
        m = _LAYER.match(name)
        said = shown(m.group(1) if m and m.group(1) else str(top), quote=False)  # the digits as written
        raise FolderConfigError(f"{where}: the drafter's weights name layer {said} and config.json has no "
                                f"num_hidden_layers; a drafter has at most {MAX_DRAFT_LAYERS}")
    return top + 1


def read_shape(where: str, cfg: dict[str, Any], names: set[str], *, specforge: bool) -> Shape:
    """The forward's shape from the merged config (transformer_layer_config over the top level);
    `specforge`: the folder is in SpecForge's layout (its meaning of norm_output)."""
    eagle = mapping(where, cfg, "eagle_config") or {}
    said_layers = whole(where, cfg, "num_hidden_layers", high=MAX_DRAFT_LAYERS)
    layers = said_layers if said_layers is not None else _layers_named(where, names)
    aux, aux_key = whole(where, cfg, "num_aux_hidden_states"), "num_aux_hidden_states"
    if aux is None:
        for key, holder in (("eagle_config.eagle_aux_hidden_state_layer_ids", eagle),
                            ("eagle_aux_hidden_state_layer_ids", cfg)):
            ids = holder.get("eagle_aux_hidden_state_layer_ids")
            if isinstance(ids, list) and ids:
                aux, aux_key = len(ids), key
                break
    fc_norm_key = "fc_norm"
    fc_norm = flag(where, cfg, "fc_norm", default=False)
    if not fc_norm and flag(where, cfg, "use_aux_norm", default=False):
        fc_norm, fc_norm_key = True, "use_aux_norm"
    if "norm_before_fc" in eagle:
        norm_before_fc = flag(where, eagle, "norm_before_fc", default=False)
    else:
        norm_before_fc = flag(where, cfg, "norm_before_fc", default=False)
    said_output = cfg.get("norm_output") is not None
    norm_output = flag(where, cfg, "norm_output", default=specforge)
    later = []
    for i in range(1, layers):
        p = layer_prefix(i)
        has_hidden, has_input = p + "hidden_norm.weight" in names, p + "input_layernorm.weight" in names
        later.append("input_layernorm.weight" if has_input and not has_hidden else "hidden_norm.weight")
    return Shape(layers=layers, layers_key="num_hidden_layers" if said_layers is not None else "the weights",
                 aux=aux, aux_key=aux_key if aux is not None else None, fc_norm=fc_norm, fc_norm_key=fc_norm_key,
                 norm_before_fc=norm_before_fc,
                 norm_before_residual=flag(where, cfg, "norm_before_residual", default=False),
                 norm_output=norm_output, norm_output_said=said_output, specforge_norm_output=specforge,
                 later_norms=tuple(later))


def check_names(where: str, shape: Shape, names: set[str], k: int) -> list[str]:
    """Raise FolderConfigError (one line) when the weights and the forward disagree: a weight it
    would not apply (named, with the config keys that decide it) or one it needs that is absent.
    Returns the notes for weights no engine drafts with (NOT_DRAFTING)."""
    used = {*shape.weights(k), "d2t"}  # d2t is optional: without it the head proposes target ids
    both = [layer_prefix(i) + "input_layernorm.weight" for i in range(1, shape.layers)
            if layer_prefix(i) + "input_layernorm.weight" in names and layer_prefix(i) + "hidden_norm.weight" in names]
    used |= set(both)  # checked for equality with hidden_norm by the loader
    extra = sorted(n for n in names if n not in used and n not in NOT_DRAFTING and n != "embed_tokens.weight")
    if extra:
        raise FolderConfigError(f"{where}: the drafter holds weights its forward would not apply: "
                                f"{_listed(extra)} ({_keys_for(extra, shape, k)}); refusing to score it")
    missing = [n for n in shape.weights(k) if n not in names and n != "embed_tokens.weight"]
    if missing:
        keys = _keys_for(missing, shape, k)
        raise FolderConfigError(f"{where}: not an EAGLE-3 drafter: weights lack {_listed(missing)}"
                                + (f" ({keys})" if keys.startswith("config.json") else ""))
    return [f"{n} not applied: {why}" for n, why in NOT_DRAFTING.items() if n in names and why]


def _listed(names: list[str]) -> str:
    listed = ", ".join(shown(n, quote=False) for n in names[:4])
    return listed + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def _keys_for(names: list[str], shape: Shape, k: int) -> str:
    """The config keys that decide whether these weights are applied, with their values."""
    keys = []
    applied = set(shape.weights(k))

    def counted_layer(n: str) -> bool:  # a later layer's weight, there or not by the layer count
        at = layer_indices([n])
        return bool(at) and max(at) >= 1 and (max(at) >= shape.layers or n in applied)

    if any(counted_layer(n) for n in names):
        keys.append(f"num_hidden_layers = {shape.layers}" if shape.layers_key == "num_hidden_layers"
                    else f"no num_hidden_layers: {shape.layers} layer{'s' if shape.layers != 1 else ''} from the weights")
    if any(n.startswith("fc_norm.") for n in names):
        keys.append(f"{shape.fc_norm_key} {'true' if shape.fc_norm else 'not true'}, {k} aux states")
    if "input_norm.weight" in names:
        keys.append(f"norm_before_fc {'true' if shape.norm_before_fc else 'not true'}")
    if not keys:
        return "no EAGLE-3 config key applies them"
    return "config.json " + "; ".join(keys)
