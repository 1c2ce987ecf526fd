"""tokenspeed: which ids it reads from a drafter's config.json (eagle_config's when there is one,
else the top level's), into which boundaries, for which targets: its two releases, 0.1.0 and
0.1.1, read from their wheels."""

from __future__ import annotations

from typing import Any

from eagle3_tui.dataset.serving.capture import (
    NESTED,
    TOP,
    Capture,
    Config,
    capture,
    default_capture,
    guess,
    is_id,
    numeric,
    plus_one,
    refused,
    show,
    to_b,
)
from eagle3_tui.dataset.serving.versions import Change, at_least

ENGINE = "tokenspeed"
RELEASES = ("0.1.0", "0.1.1")

CHANGES = (
    Change("0.1.0", "eagle_config's ids when eagle_config exists (the top-level key is not read then), else the "
                    "top level's; b = id + 1; id L the residual before the final norm; fc for the top-level ids' count",
           "python/tokenspeed/runtime/execution/model_executor.py 104-113 and 400-408, "
           "models/base/causal_lm.py 133-144, base/transformer_model.py 205-236, llama_eagle3.py 421-425 @ 0.1.0"),
    Change("0.1.1", "the same in text_config too; the server flag --eagle3-layers-to-capture replaces them; "
                    "Kimi K3 takes the ids as b = id", "execution/factory.py 47-78 and 193-200, kimi_k3.py 3639-3658 "
                                                     "@ 0.1.1"),
)

#: no model class in either release (registry.py 57-60 @ 0.1.1: "are not supported for now")
NO_MODEL = ("Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration")
#: models whose forward returns no aux states at all, whatever the ids: qwen2.py 372, qwen3.py 401,
#: qwen3_moe.py 196 @ 0.1.0 (367, 389, 195 @ 0.1.1: `return hidden_states, None`)
NO_AUX = ("Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM")
#: models that capture before layer i only (no b = L): deepseek_v3.py 1445 @ 0.1.0, 1997 @ 0.1.1 (and
#: its users kimi_k25.py, glm5.py), longcat_flash.py 632-635 @ 0.1.0, qwen3_5.py 1021-1026 @ 0.1.0
BEFORE = ("DeepseekV3ForCausalLM", "KimiK25ForConditionalGeneration", "GlmMoeDsaForCausalLM", "LongcatFlashForCausalLM",
          "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeForCausalLM")
K3 = ("KimiK3ForConditionalGeneration",)
FLAG = "the server flag --eagle3-layers-to-capture, when given, replaces the drafter's ids (factory.py 197 @ 0.1.1)"


def _fc(config: Config) -> int:
    """llama_eagle3.py 421-425 @ 0.1.0 (412-416 @ 0.1.1): len(config.eagle_aux_hidden_state_layer_ids)
    when the top level has the key, else 3."""
    top = config.get(TOP)
    try:
        return len(top) if top is not None else 3
    except TypeError:
        return 3


def _ids(config: Config, v: str) -> tuple[Any, str | None]:
    """_eagle_aux_layer_ids: eagle_config's ids when eagle_config is there, else the top level's;
    from 0.1.1 the same in text_config; `if ids: return list(ids)`."""
    candidates = [config]
    if at_least(v, "0.1.1") and isinstance(config.get("text_config"), dict):
        candidates.append(config["text_config"])
    for c in candidates:
        section = c.get("eagle_config")
        value = (section.get("eagle_aux_hidden_state_layer_ids") if isinstance(section, dict) else None) \
            if section is not None else c.get(TOP)
        if value:
            return value, ("text_config." if c is not config else "") + (NESTED if section is not None else TOP)
    return None, None


def rule(config: Config, L: int, arch: str | None, v: str, variant: str | None = None) -> Capture:
    """What tokenspeed at release v does with this drafter on this target."""
    depends = FLAG if at_least(v, "0.1.1") else None
    if "speculators_model_type" in config:
        return refused(f"a speculators-format config (speculators_model_type "
                       f"{show(config['speculators_model_type'])}): tokenspeed does not read the speculators "
                       "format (no code reads speculators_model_type)")
    if arch in NO_MODEL:
        return refused(f"tokenspeed has no model class for {arch} (registry.py 57-60 @ 0.1.1: the architecture "
                       "is not supported)")
    fc = _fc(config)
    if arch in NO_AUX:
        return capture([], [], None, f"tokenspeed's {arch} returns no aux states (its model's forward returns "
                       "(hidden_states, None)): the drafter is fed the target's last hidden state, its fc skipped "
                       "(llama_eagle3.py 489)", fc=fc, depends=depends)
    raw, where = _ids(config, v)
    if raw is None:
        return guess(L, "tokenspeed", default_capture(L), fc=fc, depends=depends)
    if at_least(v, "0.1.1") and arch in K3:
        return _k3(raw, where, L, fc, depends)
    values, error = plus_one(raw)
    if values is None:
        return capture([raw], [], where, f"{where} {show(raw)}: {error}", fc=fc, fails=error, depends=depends)
    before_only = arch in BEFORE
    bounds = [to_b(x, 1, 0, L - 1) for x in values]  # captured before layer id + 1: id L - 1 never is
    # transformer_model.py 225-236 @ 0.1.0: capture index L + 1 is the residual before the final norm (b = L)
    if not before_only:
        bounds = [L if numeric(x) and x == L else b for x, b in zip(values, bounds, strict=False)]
    how = "read as b = id + 1" + (f" ({arch}: captured before layer id + 1, so id L - 1 and L capture nothing)"
                                  if before_only else
                                  f" (id L = {L}: the residual before the final norm; id L - 1 captures nothing)")
    return capture(values, bounds, where, f"{where} {show(raw)}, {how}", fc=fc, depends=depends)


def _k3(raw: Any, where: str | None, L: int, fc: int, depends: str | None) -> Capture:
    """kimi_k3.py 3639-3658 @ 0.1.1: ids unchanged (one-based completed layers), sorted, unique, 1..L."""
    k3 = list(raw) if isinstance(raw, (list, tuple)) else [raw]
    bounds = [to_b(x, 0, 1, L) for x in k3]
    fails = None
    if any(not is_id(x) for x in k3) or k3 != sorted(k3) or len(set(k3)) != len(k3):
        fails = "K3 needs the ids sorted ascending and unique: ValueError"
    elif None in bounds:
        fails = f"K3 needs every id in 1..{L}: ValueError"
    return capture(k3, bounds, where, f"{where} {show(raw)}, read as b = id (Kimi K3)", fc=fc, fails=fails,
                   depends=depends)
