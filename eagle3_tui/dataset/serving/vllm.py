"""vLLM: which ids it reads from a drafter's config.json, into which boundaries, for which targets,
release by release (every release from 0.10.2 to 0.34.0 read from its wheel).

From 0.22.0 to 0.33.0 two model runners read the ids differently (`variant`: "V1 runner", "V2
runner"); before 0.22.0 both read the top level alone (the V2 runner is opt-in from 0.17.0), from
0.34.0 V2 is the only one.
"""

from __future__ import annotations

from typing import Any

from eagle3_tui.dataset.serving.capture import (
    NESTED,
    TOP,
    Capture,
    Config,
    capture,
    default_capture,
    fc_nested,
    guess,
    nested,
    numeric,
    refused,
    show,
    to_b,
)
from eagle3_tui.dataset.serving.versions import Change, at_least

ENGINE = "vllm"
RELEASES = ("0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.15.1",
            "0.16.0", "0.17.0", "0.17.1", "0.18.0", "0.18.1", "0.19.0", "0.19.1", "0.20.0", "0.20.1", "0.20.2",
            "0.21.0", "0.22.0", "0.22.1", "0.23.0", "0.24.0", "0.25.0", "0.25.1", "0.26.0", "0.27.0", "0.27.1",
            "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.34.0")
V1, V2 = "V1 runner", "V2 runner"

CHANGES = (
    Change("0.10.2", "the target's default ids only; fc for 3 states",
           "vllm/v1/worker/gpu_model_runner.py 2382-2389, model_executor/models/llama_eagle3.py 130-134 @ 0.10.2"),
    Change("0.11.0", "gpt-oss takes EAGLE-3 (SupportsEagle3)", "model_executor/models/gpt_oss.py 635 @ 0.11.0"),
    Change("0.11.1", "the top-level ids, b = id, captured before layer id; Qwen3-MoE takes EAGLE-3",
           "gpu_model_runner.py 3395-3417, llama.py 452-453, qwen3_moe.py 457-461 and 629-631 @ 0.11.1"),
    Change("0.12.0", "the drafter reads eagle_config.use_aux_hidden_state", "llama_eagle3.py 145-149 @ 0.12.0"),
    Change("0.18.0", "captured after each layer: id L is b = L; the DeepSeek-V2 family takes EAGLE-3, before "
                     "the layer only", "llama.py 419-428, interfaces.py 1282-1292, deepseek_v2.py 1239-1240 and "
                                       "1297-1304 @ 0.18.0"),
    Change("0.19.1", "Gemma 4 takes EAGLE-3", "model_executor/models/gemma4.py 1398-1400 @ 0.19.1"),
    Change("0.20.0", "V1: dflash_config.target_layer_ids as they are when the top level has none",
           "gpu_model_runner.py 4961-4965 @ 0.20.0"),
    Change("0.22.0", "V1: eagle_config's ids (b = id) when the top level has none, dflash_config's + 1; fc for "
                     "num_aux_hidden_states or eagle_config's ids; two runners",
           "gpu_model_runner.py 5241-5256, llama_eagle3.py 179-190, config/vllm.py 69 @ 0.22.0"),
    Change("0.24.0", "V2: dflash_config.target_layer_ids + 1; Qwen3-Next takes EAGLE-3; the Qwen3 drafter class",
           "v1/worker/gpu/spec_decode/eagle/eagle3_utils.py 41-49, qwen3_next.py 766-773, registry.py 614 @ 0.24.0"),
    Change("0.25.0", "V2: dspark_target_layer_ids + 1, target_layer_ids + 1; the DeepSeek-V2 family captures id L",
           "eagle3_utils.py 47-55, deepseek_v2.py 1489-1490 @ 0.25.0"),
    Change("0.27.0", "V2: dflash_config / eagle_config layer_ids", "eagle3_utils.py 56-62 @ 0.27.0"),
    Change("0.30.0", "the ids deduplicated and sorted (sorted(set())); V2: dspark ids as they are for deepseek_v41",
           "model_executor/models/interfaces.py 1577-1578, eagle3_utils.py 112-122 @ 0.30.0"),
    Change("0.34.0", "the V1 runner is gone (gpu_model_runner.py removed)", "eagle3_utils.py 103-140 @ 0.34.0"),
)

#: the targets' first release read whose model class implements SupportsEagle3 (None: none through
#: 0.34.0); a target not named takes EAGLE-3 in every release read (llama.py, qwen2.py, qwen3.py).
#: Without it start-up fails: "Model does not support EAGLE3 interface" (gpu_model_runner.py 2383-2389
#: @ 0.10.2, eagle3_utils.py 18-19 @ 0.34.0); before 0.17.0 the speculative config refuses a model type
#: outside ["llama", "qwen", "minicpm", "gpt_oss", ...] first (config/speculative.py 689-709 @ 0.16.0)
EAGLE3_SINCE: dict[str, str | None] = {
    "Gemma3ForCausalLM": None,  # gemma3.py 367 @ 0.34.0: SupportsLoRA, SupportsPP only
    "Gemma3ForConditionalGeneration": None,  # gemma3_mm.py 501-503 @ 0.34.0
    "Qwen2MoeForCausalLM": None,  # qwen2_moe.py 424 @ 0.34.0
    "GptOssForCausalLM": "0.11.0",  # gpt_oss.py 616 @ 0.10.2 (without), 635 @ 0.11.0
    "Qwen3MoeForCausalLM": "0.11.1",  # qwen3_moe.py 571-572 @ 0.11.0 (without), 629-631 @ 0.11.1
    "DeepseekV2ForCausalLM": "0.18.0",  # deepseek_v2.py 1263-1265 @ 0.17.1 (SupportsEagle only), 1297-1304 @ 0.18.0
    "DeepseekV3ForCausalLM": "0.18.0",
    "DeepseekV32ForCausalLM": "0.18.0",
    "DeepseekForCausalLM": "0.18.0",
    "MistralLarge3ForCausalLM": "0.18.0",
    "KimiK25ForConditionalGeneration": "0.18.0",
    "GlmMoeDsaForCausalLM": "0.18.0",
    "Gemma4ForCausalLM": "0.19.1",  # gemma4.py 1398-1400 @ 0.19.1
    "Gemma4ForConditionalGeneration": "0.19.1",
    "Qwen3NextForCausalLM": "0.24.0",  # qwen3_next.py 766-773 @ 0.24.0
}
#: DeepSeek-V2 family (deepseek_v2.py): captures before layer idx with no residual guard, and from
#: 0.25.0 after the last layer too (the end_layer check, 1489 @ 0.25.0; absent @ 0.24.0)
DEEPSEEK = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekForCausalLM", "GlmMoeDsaForCausalLM",
            "MistralLarge3ForCausalLM")
#: before 0.18.0 the captures that add the residual only when there is one (id 0 is b 0):
#: qwen3_moe.py 457-460 @ 0.11.1, 494-497 @ 0.17.1 (llama.py 424-425 and qwen2.py 440-441 add it always)
GUARDED_BEFORE_018 = ("Qwen3MoeForCausalLM",)
#: vLLM 0.24.0 vllm/config/vllm.py 68-77: the targets that run on model runner V2 by default
V2_DEFAULT_024 = ("Qwen3ForCausalLM", "DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM",
                  "LlamaForCausalLM", "MistralForCausalLM")


def variants(since: str) -> tuple[str | None, ...]:
    if not at_least(since, "0.22.0"):
        return (None,)
    return (V2,) if at_least(since, "0.34.0") else (V1, V2)


def _unsupported(arch: str | None, v: str) -> str | None:
    if arch not in EAGLE3_SINCE:
        return None
    since = EAGLE3_SINCE[arch]
    if since is not None and at_least(v, since):
        return None
    when = "in any release read (0.10.2 to 0.34.0)" if since is None else f"before {since}"
    return (f"{arch} does not implement SupportsEagle3 {when}: \"Model does not support EAGLE3 interface\" "
            "(eagle3_utils.py 18-19 @ 0.34.0; before 0.17.0 the speculative config already refuses its model "
            "type, speculative.py 689-709 @ 0.16.0)")


def _fc(config: Config, v: str) -> int:
    """Before 0.22.0, 3 states (llama_eagle3.py 176-186 @ 0.21.0). Then the drafter's class, picked
    by its architectures (registry.py 614 @ 0.24.0, 732-737 @ 0.34.0): Eagle3Qwen3ForCausalLM
    (qwen3_eagle3.py 186-187 @ 0.24.0, 201-213 @ 0.34.0) counts num_aux_layers, num_aux_hidden_states,
    then the top-level ids or else eagle_config's; the Llama class as fc_nested."""
    if not at_least(v, "0.22.0"):
        return 3
    archs = config.get("architectures")
    if not (at_least(v, "0.24.0") and isinstance(archs, list) and "Eagle3Qwen3ForCausalLM" in archs):
        return fc_nested(config)
    for name in ("num_aux_layers", "num_aux_hidden_states"):
        n = config.get(name)
        if isinstance(n, int) and not isinstance(n, bool):
            return n
    ids = config.get(TOP) or nested(config, "eagle_aux_hidden_state_layer_ids")
    try:
        return len(ids) if ids else 3
    except TypeError:
        return 3


def _fallback(config: Config, v: str, variant: str | None) -> tuple[Any, str, int] | None:
    """The keys a runner reads when the top level has no ids: (ids, key, + what)."""
    found: tuple[Any, str, int] | None = None
    dflash = config.get("dflash_config")
    if isinstance(dflash, dict) and dflash and dflash.get("target_layer_ids") and (
            at_least(v, "0.22.0") if variant == V1 else at_least(v, "0.24.0") if variant == V2
            else at_least(v, "0.20.0")):
        found = (dflash["target_layer_ids"], "dflash_config.target_layer_ids", 1 if at_least(v, "0.22.0") else 0)
    if variant == V1:  # gpu_model_runner.py 5252-5253 @ 0.22.0: eagle_config's ids replace them
        section = config.get("eagle_config")
        if isinstance(section, dict) and section:
            ids = section.get("eagle_aux_hidden_state_layer_ids")
            found = (ids, NESTED, 0) if ids else None
    if variant == V2 and found is None and at_least(v, "0.25.0"):
        dspark = config.get("dspark_target_layer_ids")
        if dspark:
            as_is = at_least(v, "0.30.0") and config.get("model_type") == "deepseek_v41"
            found = (dspark, "dspark_target_layer_ids", 0 if as_is else 1)
        elif config.get("target_layer_ids"):
            found = (config["target_layer_ids"], "target_layer_ids", 1)
        elif at_least(v, "0.27.0"):
            for name in ("dflash_config", "eagle_config"):
                section = config.get(name)
                if isinstance(section, dict) and section.get("layer_ids"):
                    found = (section["layer_ids"], f"{name}.layer_ids", 0)
                    break
    return found


def _ids(config: Config, v: str, variant: str | None) -> tuple[Any, str, int] | None:
    """The ids a runner reads and how they convert to b (+ what), or None (its default). The top
    level first (gpu_model_runner.py 3409-3415 @ 0.11.1); anything but a non-empty list or tuple:
    None."""
    top = config.get(TOP)
    found = (top, TOP, 0) if top else _fallback(config, v, variant)
    if found is None or not (isinstance(found[0], (list, tuple)) and len(found[0]) > 0):
        return None
    if found[2] == 1 and any(not numeric(x) for x in found[0]):
        return None  # [i + 1 for i in ...] would raise: not modelled past saying the ids are bad
    return found


def _runner(arch: str | None) -> str:
    if arch is None:
        return "the target's architecture is unknown: which runner is the default cannot be told"
    v2 = arch in V2_DEFAULT_024
    return (f"{arch} runs on the {'V2' if v2 else 'V1'} model runner by default at 0.24.0 "
            "(vllm/config/vllm.py 68-77; the list changes by release, and from 0.34.0 V2 is the only one); "
            "VLLM_USE_V2_MODEL_RUNNER picks")


def rule(config: Config, L: int, arch: str | None, v: str, variant: str | None) -> Capture:
    """What vLLM at release v (and runner) does with this drafter on this target."""
    if (why := _unsupported(arch, v)) is not None:
        return refused(why)
    depends = _runner(arch) if variant else None
    if not at_least(v, "0.11.1"):
        return guess(L, "vLLM", default_capture(L), why=(
            f"vLLM before 0.11.1 ignores the drafter's ids: always {default_capture(L)}"))
    if at_least(v, "0.12.0") and nested(config, "use_aux_hidden_state") is False:
        return capture([], [], None, "eagle_config.use_aux_hidden_state is false: the drafter takes the target's "
                       "last hidden state, no aux states (llama_eagle3.py 145-149 @ 0.12.0, 180-183 @ 0.34.0)",
                       depends=depends)
    fc = _fc(config, v)
    found = _ids(config, v, variant)
    if found is None:
        r = guess(L, "vLLM", default_capture(L), fc=fc, depends=depends)
        if nested(config, "eagle_aux_hidden_state_layer_ids") is not None and variant != V1:
            r["why"] += f" ({NESTED} is there, but this vLLM reads only the top-level {TOP})"
        return r
    return _read(list(found[0]), found[1], found[2], L, arch, v, fc, depends)


def _read(raw: list[Any], key: str, shift: int, L: int, arch: str | None, v: str, fc: int,
          depends: str | None) -> Capture:
    ids = [(x + shift) if shift and numeric(x) else x for x in raw]
    if at_least(v, "0.30.0"):  # interfaces.py 1578 @ 0.30.0: tuple(sorted(set(layers)))
        try:
            sorted(set(ids))
        except TypeError:
            return capture(raw, [None] * len(raw), key, f"{key} {show(raw)}: sorted(set(ids)) raises TypeError at "
                           "start-up", fc=fc, fails=f"{show(raw)}: sorted(set(ids)) raises TypeError", depends=depends)
    deepseek = arch in DEEPSEEK
    after = at_least(v, "0.25.0") if deepseek else at_least(v, "0.18.0")
    bounds = [to_b(x, 0, 0, L if after else L - 1) for x in ids]
    fails = None
    guarded = at_least(v, "0.18.0") if not deepseek else False
    if 0 in bounds and not (guarded or arch in GUARDED_BEFORE_018):
        # the loop captures hidden_states + residual before layer 0, where residual is None
        fails = "id 0: hidden_states + residual with residual None raises TypeError"
    how = "read as b = id" + (" + 1" if shift else "")
    if not after:
        how += (" (DeepSeek family: " if deepseek else " (") + f"captured before layer id, so id L = {L} captures nothing)"
    return capture(raw, bounds, key, f"{key} {show(raw)}, {how}", fc=fc, fails=fails,
                   fails_at="first forward" if fails else None, depends=depends)
