"""How each serving engine (and SpecForge's trainer) reads an EAGLE-3 drafter's config.json into
the boundaries of the target it captures: one rule per engine, version range and, where the code
differs, runner and target architecture.

Boundary b (FORMATS.md): 0 the embedding output, b = i + 1 the output of decoder layer i, b = L the
last residual before the final norm. Every rule below was read from the engine's released code;
the file, lines and version are in SOURCES and docs/serving.md. A rule returns a Capture:

    {"boundaries": [b | None per id, in the config's order], "states": [the distinct b fed, in
     layer order], "fc_states": how many states the engine builds fc for | None, "fails": why the
     engine refuses this drafter | None, "guessed", "ids", "ids_from", "why", "depends"}

Ids are taken as the engines take them, not as they should be: a float or a bool goes through
`id + 1` (4.0 + 1 == 5 is captured, 4.5 + 1 never is), a string, dict or list does not (TypeError).

Plain Python (no Textual, no torch).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypedDict

from eagle3_tui.engines.model.folder_config import shown

NESTED = "eagle_config.eagle_aux_hidden_state_layer_ids"
TOP = "eagle_aux_hidden_state_layer_ids"

#: SGLang: models whose set_eagle3_layers_to_capture has the first-id rule (deepseek_v2.py
#: 3458-3473 @ 0.5.23) and which capture through AuxHiddenStatePacker (a missing capture fails,
#: aux_hidden_states.py 86 @ 0.5.23, an assert at 0.5.17): DeepSeek-V2/V3/V3.2, its subclasses
#: MistralLarge3ForCausalLM (mistral_large_3.py 12) and GlmMoeDsaForCausalLM (glm4_moe.py 1284), and
#: the models that hand the ids to a DeepSeek language model (kimi_k25.py, glm4_moe_lite.py)
SGLANG_DEEPSEEK = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
                   "KimiK25ForConditionalGeneration", "Glm4MoeLiteForCausalLM")
SGLANG_DEEPSEEK_SUBCLASSES = ("MistralLarge3ForCausalLM", "GlmMoeDsaForCausalLM")
#: SGLang: models that also capture after the last layer (b = L) when id + 1 == L
#: (gemma3_causal.py 671, gemma4_causal.py 1093 @ 0.5.23; 675 and 1015 @ 0.5.17)
SGLANG_LAST = ("Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "Gemma4ForCausalLM",
               "Gemma4ForConditionalGeneration")
GPT_OSS_ARCHS = ("GptOssForCausalLM",)
#: SGLang: MoE models that index self.layers[id + 1] at start-up (qwen2_moe.py 1153-1156,
#: qwen3_next.py 954-957 @ 0.5.23; qwen2_moe.py 894, qwen3_next.py 929 @ 0.5.17): id >= L - 1 fails
SGLANG_INDEXED = ("Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM", "Qwen3NextForCausalLM")
#: vLLM: DeepSeek-V2 family (deepseek_v2.py): captures before layer idx, and only from 0.33.0 after
#: the last layer too (the end_layer check, 1586-1587 @ 0.33.0 and 0.34.0; absent @ 0.18.0, 0.24.0)
VLLM_DEEPSEEK = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekForCausalLM",
                 "GlmMoeDsaForCausalLM", "MistralLarge3ForCausalLM")
#: vLLM 0.24.0 vllm/config/vllm.py 68-77: the targets that run on model runner V2 by default
VLLM_V2_DEFAULT_024 = ("Qwen3ForCausalLM", "DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM",
                       "GraniteMoeForCausalLM", "LlamaForCausalLM", "MistralForCausalLM")
#: tokenspeed @ f4d8ec6e: models that capture before layer i only (no b = L): deepseek_v3.py
#: 1591-1593 (and its users kimi_k25.py, glm5.py), longcat_flash.py 632-635, qwen3_5.py 1027-1032
TOKENSPEED_BEFORE = ("DeepseekV3ForCausalLM", "KimiK25ForConditionalGeneration", "GlmMoeDsaForCausalLM",
                     "LongcatFlashForCausalLM")
TOKENSPEED_QWEN35 = ("Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
                     "Qwen3_5MoeForCausalLM")
#: tokenspeed qwen3.py (Qwen3Model.forward returns (hidden_states, None)): no aux states at all
TOKENSPEED_NO_AUX = ("Qwen3ForCausalLM",)
TOKENSPEED_K3 = ("KimiK3ForConditionalGeneration",)


#: a drafter's config.json as read: any JSON object (the rules look up the keys they know)
Config = dict[str, Any]


class Capture(TypedDict, total=False):
    """What one engine (and version range) does with a config: a rule's answer."""

    boundaries: list[int | None]  # per id, in the config's order: b, None when nothing is captured
    states: list[int]  # the distinct boundaries fed to the drafter, in layer order
    fc_states: int | None  # how many states the engine builds the drafter's fc for (None: not read)
    fails: str | None  # the engine refuses this drafter (start-up, load, first forward): why
    guessed: bool  # the config pins nothing: the engine's default
    ids: Any  # as the engine read them
    ids_from: str | None  # the config key the ids came from
    why: str
    depends: str | None  # what the answer depends on that the tool cannot know (a flag, a runner)


def nested(config: Config, key: str) -> Any:
    section = config.get("eagle_config")
    return section.get(key) if isinstance(section, dict) else None


def is_id(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def default_capture(L: int) -> list[int]:
    """The guess every engine falls back to: b 2, L//2, L-3 (vLLM and SGLang write it as "input
    of" ids [2, L//2, L-3], TensorRT-LLM and SpecForge as "output of" ids [1, L//2-1, L-4])."""
    return [2, L // 2, L - 3]


def _numeric(v: Any) -> bool:
    """What `id + 1` accepts: an int, a float, a bool (True + 1 == 2)."""
    return isinstance(v, (int, float))


def _b(v: Any, shift: int, lo: int, hi: int) -> int | None:
    """The boundary a capture loop reaches for id v (`i in layers_to_capture` with i an int):
    v + shift when it is a whole number in lo..hi, else None (never equal to a layer index)."""
    # json.loads reads NaN and Infinity too; an int is never either (math.isfinite of a 400-digit
    # one raises OverflowError)
    if not _numeric(v) or (isinstance(v, float) and not math.isfinite(v)):
        return None
    b = v + shift
    return int(b) if b == int(b) and lo <= b <= hi else None


def _capture(ids: list[Any], bounds: list[int | None], key: str | None, why: str, *, guessed: bool = False,
             fc: int | None = None, fails: str | None = None, depends: str | None = None) -> Capture:
    states = sorted({b for b in bounds if b is not None})
    if fails is None and fc is not None and states and len(states) != fc:
        fails = (f"its fc takes {_show(fc)} states and {len(states)} are captured"
                 + (" (equal ids capture one state)" if len(states) < len([b for b in bounds if b is not None]) else "")
                 + ": the first forward fails on the shapes")
    return {"boundaries": bounds, "states": [] if fails else states, "fc_states": fc, "fails": fails,
            "guessed": guessed, "ids": ids, "ids_from": key, "why": why, "depends": depends}


def _guess(L: int, who: str, written: list[int], *, fc: int | None = 3, why: str | None = None,
           depends: str | None = None) -> Capture:
    b = default_capture(L)
    return _capture(written, list(b), None, why or f"the drafter names no ids {who} reads: {who}'s default {written}",
                    guessed=True, fc=fc, depends=depends)


def _plus_one(raw: Any) -> tuple[list[Any] | None, str | None]:
    """`[val + 1 for val in layer_ids]`: the values, or why it raises (a string or dict is
    iterated, a number is not iterable, a non-number cannot take + 1)."""
    if isinstance(raw, (int, float)):
        return None, f"{_show(raw)} is not a list: `for val in layer_ids` raises TypeError"
    try:
        values = list(raw)
    except TypeError:
        return None, f"{_show(raw)} is not a list: `for val in layer_ids` raises TypeError"
    bad = next((v for v in values if not _numeric(v)), _NONE)
    if bad is not _NONE:
        return None, f"id {_show(bad)}: `id + 1` raises TypeError at start-up"
    return values, None


_NONE = object()


def _show(v: Any) -> str:
    """A config.json value in a message, as JSON writes it, cut short (folder_config.shown)."""
    return shown(v)


def _fc_nested(config: Config) -> int:
    """vLLM 0.22.0+ llama_eagle3.py 179-185 and SGLang llama_eagle3.py 157-161 @ 0.5.23: fc takes
    num_aux_hidden_states, else len(eagle_config ids) when they are truthy, else 3 states."""
    n = config.get("num_aux_hidden_states")
    if isinstance(n, int) and not isinstance(n, bool):
        return n
    ids = nested(config, "eagle_aux_hidden_state_layer_ids")
    try:
        return len(ids) if ids else 3
    except TypeError:
        return 3


# ------------------------------------------------------------------------------ vLLM


def _fc_vllm(config: Config) -> int:
    """The drafter's class is picked by its architectures (registry.py 732-737 @ 0.34.0):
    Eagle3Qwen3ForCausalLM (qwen3_eagle3.py 201-213 @ 0.34.0, 186-187 @ 0.24.0) sizes fc from
    num_aux_layers, num_aux_hidden_states, then the top-level ids or else eagle_config's; the Llama
    class (every other EAGLE-3 drafter) as _fc_nested."""
    archs = config.get("architectures")
    if not (isinstance(archs, list) and "Eagle3Qwen3ForCausalLM" in archs):
        return _fc_nested(config)
    for key in ("num_aux_layers", "num_aux_hidden_states"):
        n = config.get(key)
        if isinstance(n, int) and not isinstance(n, bool):
            return n
    ids = config.get(TOP) or nested(config, "eagle_aux_hidden_state_layer_ids")
    try:
        return len(ids) if ids else 3
    except TypeError:
        return 3


def vllm_before(config: Config, L: int, arch: str | None) -> Capture:
    return _guess(L, "vLLM", default_capture(L),
                  why=f"vLLM before 0.11.1 ignores the drafter's ids: always {default_capture(L)}")


def _vllm_ids(config: Config, *, nested_fallback: bool, extra: bool) -> tuple[Any, str, int] | None:
    """The ids a vLLM runner reads and how they convert to b (the shift), or None (its default).
    Top level first; then dflash_config.target_layer_ids + 1; with `nested_fallback` (the V1 runner,
    gpu_model_runner.py 5241-5256 @ 0.22.0) eagle_config's ids replace them (b = id, no + 1); with
    `extra` (V2 runner @ 0.34.0, eagle3_utils.py 109-140) dspark_target_layer_ids, target_layer_ids
    + 1, then dflash_config / eagle_config layer_ids. Anything but a non-empty list or tuple: None."""
    def ok(v: Any) -> bool:
        return isinstance(v, (list, tuple)) and len(v) > 0

    top = config.get(TOP)
    if top:
        return (top, TOP, 0) if ok(top) else None
    found: tuple[Any, str, int] | None = None
    dflash = config.get("dflash_config")
    if isinstance(dflash, dict) and dflash.get("target_layer_ids"):
        found = (dflash["target_layer_ids"], "dflash_config.target_layer_ids", 1)
    if nested_fallback:
        section = config.get("eagle_config")
        if isinstance(section, dict) and section:
            ids = section.get("eagle_aux_hidden_state_layer_ids")
            found = (ids, NESTED, 0) if ids else None
    if extra and found is None:
        dspark = config.get("dspark_target_layer_ids")
        if dspark:
            found = (dspark, "dspark_target_layer_ids", 0 if config.get("model_type") == "deepseek_v41" else 1)
        elif config.get("target_layer_ids"):
            found = (config["target_layer_ids"], "target_layer_ids", 1)
        else:
            for name in ("dflash_config", "eagle_config"):
                section = config.get(name)
                if isinstance(section, dict) and section.get("layer_ids"):
                    found = (section["layer_ids"], f"{name}.layer_ids", 0)
                    break
    if found is None or not ok(found[0]):
        return None
    if found[2] == 1 and any(not _numeric(v) for v in found[0]):
        return None  # [i + 1 for i in ...] would raise: not modelled past saying the ids are bad
    return found


def _vllm(config: Config, L: int, arch: str | None, *, nested_fallback: bool = False,
          extra: bool = False, last: bool = True, dedupe: bool = False, fc_from_nested: bool = True,
          deepseek_last: bool = False, depends: str | None = None) -> Capture:
    fc = _fc_vllm(config) if fc_from_nested else 3
    found = _vllm_ids(config, nested_fallback=nested_fallback, extra=extra)
    if found is None:
        r = _guess(L, "vLLM", default_capture(L), fc=fc, depends=depends)
        if nested(config, "eagle_aux_hidden_state_layer_ids") is not None and not nested_fallback:
            r["why"] += f" ({NESTED} is there, but this vLLM reads only the top-level {TOP})"
        return r
    raw, key, shift = found
    ids = [(v + shift) if shift and _numeric(v) else v for v in raw]
    if dedupe:  # interfaces.py 1630 @ 0.34.0: tuple(sorted(set(layers)))
        try:
            sorted(set(ids))
        except TypeError:
            return _capture(list(raw), [], key, f"{key} {_show(raw)}: sorted(set(ids)) raises TypeError at start-up",
                            fc=fc, fails=f"{_show(raw)}: sorted(set(ids)) raises TypeError", depends=depends)
    deepseek = arch in VLLM_DEEPSEEK
    top_b = L if (last and not deepseek) or (deepseek and deepseek_last) else L - 1
    bounds = [_b(v, 0, 0, top_b) for v in ids]
    fails = None
    if 0 in bounds and (deepseek or not last):
        # the loop captures hidden_states + residual before layer 0, where residual is None
        fails = "id 0: hidden_states + residual with residual None raises TypeError at the first forward"
    how = "read as b = id" + (" + 1" if shift else "")
    if deepseek and not deepseek_last:
        how += f" (DeepSeek family: captured before layer id, so id L = {L} captures nothing)"
    elif not last:
        how += f" (captured before layer id: id L = {L} captures nothing)"
    return _capture(list(raw), bounds, key, f"{key} {_show(raw)}, {how}", fc=fc, fails=fails, depends=depends)


def vllm_0_11(config: Config, L: int, arch: str | None) -> Capture:
    """0.11.1 .. 0.18.0: the top level only; llama.py 424-426 @ 0.17.0 captures before layer idx."""
    return _vllm(config, L, arch, last=False, fc_from_nested=False)


def vllm_0_18(config: Config, L: int, arch: str | None) -> Capture:
    """0.18.0 .. 0.22.0: the top level only; _maybe_add_hidden_state(..., idx + 1) after each layer
    (llama.py 419-428 @ 0.18.0, PR 36063): id L is the residual before the final norm."""
    return _vllm(config, L, arch, fc_from_nested=False)


def _runner(arch: str | None) -> str:
    if arch is None:
        return "the target's architecture is unknown: which runner is the default cannot be told"
    v2 = arch in VLLM_V2_DEFAULT_024
    return (f"{arch} runs on the {'V2' if v2 else 'V1'} model runner by default at 0.24.0 "
            "(vllm/config/vllm.py 68-77); from 0.33.0 V2 is the default for every target; "
            "VLLM_USE_V2_MODEL_RUNNER picks")


def vllm_0_22_v1(config: Config, L: int, arch: str | None) -> Capture:
    """0.22.0 .. 0.34.0, model runner V1: no top-level key -> eagle_config ids as b = id, no + 1
    (gpu_model_runner.py 5241-5256 @ 0.22.0, 5207-5222 @ 0.33.0)."""
    return _vllm(config, L, arch, nested_fallback=True, depends=_runner(arch))


def vllm_0_22_v2(config: Config, L: int, arch: str | None) -> Capture:
    """0.22.0 .. 0.34.0, model runner V2: the top level, then dflash_config ids + 1
    (eagle3_utils.py 35-49 @ 0.24.0)."""
    return _vllm(config, L, arch, depends=_runner(arch))


def vllm(config: Config, L: int, arch: str | None) -> Capture:
    """0.34.0: model runner V2 only (gpu_model_runner.py is gone); eagle3_utils.py 109-140; the
    layers deduplicated and sorted; DeepSeek-V2 family captures id L (deepseek_v2.py 1586-1587)."""
    return _vllm(config, L, arch, extra=True, dedupe=True, deepseek_last=True)


# ------------------------------------------------------------------------------ SGLang


def sglang_guess_only(config: Config, L: int, arch: str | None) -> Capture:
    return _guess(L, "SGLang", default_capture(L), why=(
        f"SGLang through 0.4.8.post1 ignores the drafter's ids: model_runner.py 307 calls "
        f"set_eagle3_layers_to_capture() with none: always {default_capture(L)}"))


def _sglang(config: Config, L: int, arch: str | None, *, era: int) -> Capture:
    """era 0: after 0.4.8.post1 .. 0.5.13; 1: 0.5.13 .. 0.5.17; 2: 0.5.17 on."""
    if (spec := _speculators(config, "SGLang", L)) is not None:
        return spec
    if nested(config, "use_aux_hidden_state") is False:
        return _capture([], [], None, "eagle_config.use_aux_hidden_state is false: SGLang captures no aux states "
                        "(spec_aux_hidden_state.py @ 0.5.23)", fc=None)
    section = config.get("eagle_config")
    # spec_aux_hidden_state.py @ 0.5.23: eagle_config["eagle_aux_hidden_state_layer_ids"], any error -> None
    raw = section.get("eagle_aux_hidden_state_layer_ids") if isinstance(section, dict) else None
    fc = _fc_nested(config) if era == 2 else None  # before 0.5.17: not read
    if raw is None:
        r = _guess(L, "SGLang", default_capture(L), fc=fc)
        if config.get(TOP) is not None:
            r["why"] += f" (the top-level {TOP} is there, but SGLang reads only {NESTED})"
        return r
    deepseek = arch in SGLANG_DEEPSEEK or (era == 2 and arch in SGLANG_DEEPSEEK_SUBCLASSES)
    first_id = era >= 1 and deepseek
    values, error = _plus_one(raw)
    if first_id and isinstance(raw, list) and not (raw and raw[0] == 1):
        values = list(raw)  # list(layer_ids): no + 1, so nothing raises; a non-number is never captured
        # deepseek_v2.py: `if layer_ids and layer_ids[0] == 1` (+1) else list(layer_ids) (no + 1)
        bounds = [_b(v, 0, 0, L - 1) for v in values]
        how = f"first id {_show(values[0]) if values else 'none'} is not 1: read as b = id ({arch})"
    elif values is None:
        return _capture(raw if isinstance(raw, list) else [raw], [], NESTED, f"{NESTED} {_show(raw)}: {error}",
                        fc=fc, fails=error)
    elif era == 2 and arch in GPT_OSS_ARCHS and values and max(values) == L:
        bounds = [_b(v, 0, 0, L) for v in values]  # gpt_oss.py 1337-1352 @ 0.5.23: ids kept
        how = f"the largest id is L = {L}: read as b = id (gpt-oss)"
    else:
        last = era == 2 and (arch in GPT_OSS_ARCHS or arch in SGLANG_LAST)
        bounds = [_b(v, 1, 0, L if last else L - 1) for v in values]
        how = "read as b = id + 1" + (" (first id 1)" if first_id else "")
        if last:
            how += f"; id L - 1 = {L - 1} is the residual before the final norm (b = L, {arch})"
        if era == 2 and arch in SGLANG_INDEXED:
            over = [v for v in values if v + 1 >= L]
            if over:
                return _capture(list(values), bounds, NESTED, f"{NESTED} {_show(raw)}: {how}", fc=fc, fails=(
                    f"id {_show(over[0])}: self.layers[id + 1] is past the last of {L} layers: IndexError at "
                    f"start-up ({arch})"))
    fails = None
    if values == []:
        how = "an empty list: SGLang captures nothing (it does not guess)"
        fails = "the drafter is fed no aux states"
    elif era == 2 and deepseek and None in bounds:
        fails = ("an id captures nothing and AuxHiddenStatePacker.finalize raises "
                 f"(captured fewer than {len(values)}; aux_hidden_states.py 86 @ 0.5.23)")
    return _capture(list(values), bounds, NESTED, f"{NESTED} {_show(raw)}, {how}", fc=fc, fails=fails)


def _speculators(config: Config, who: str, L: int) -> Capture | None:
    if "speculators_model_type" not in config:
        return None
    return _capture([], [], None, f"a speculators-format config (speculators_model_type "
                    f"{_show(config['speculators_model_type'])}): {who} has no reader for it", fc=None,
                    fails=f"{who} does not read the speculators format (no code reads speculators_model_type)")


def sglang_before(config: Config, L: int, arch: str | None) -> Capture:
    return _sglang(config, L, arch, era=0)


def sglang_first_id(config: Config, L: int, arch: str | None) -> Capture:
    return _sglang(config, L, arch, era=1)


def sglang(config: Config, L: int, arch: str | None) -> Capture:
    return _sglang(config, L, arch, era=2)


# ------------------------------------------------------------------------------ TensorRT-LLM


def trtllm(config: Config, L: int, arch: str | None) -> Capture:
    """The ids come from the LLM API option speculative_config.eagle3_layers_to_capture, never from
    the drafter's config.json; without it (1, L//2-1, L-4), captured after layer id: b = id + 1;
    fc takes as many states as the option names (3 unset)."""
    ids = [1, L // 2 - 1, L - 4]
    return _guess(L, "TensorRT-LLM", ids, why=(
        f"TensorRT-LLM does not read the drafter's config.json ids: without the option "
        f"eagle3_layers_to_capture it captures after layers {ids} (b = id + 1)"), depends=(
        "the LLM API option eagle3_layers_to_capture; with eagle3_model_arch=\"mistral_large3\" it defaults to "
        "{-1} (llm_args.py EagleDecodingConfig.validate_eagle_config), which the tool does not model"))


# ------------------------------------------------------------------------------ tokenspeed


def tokenspeed_before(config: Config, L: int, arch: str | None) -> Capture:
    return _guess(L, "tokenspeed", default_capture(L),
                  why=f"tokenspeed before PR 526 ignores the drafter's ids: always {default_capture(L)}")


FLAG = "the server flag --eagle3-layers-to-capture, when given, replaces the drafter's ids (factory.py 99)"


def _tokenspeed(config: Config, L: int, arch: str | None, *, pr958: bool) -> Capture:
    """_eagle_aux_layer_ids: eagle_config.eagle_aux_hidden_state_layer_ids when eagle_config is
    there (then the top-level key is not read), else the top-level key; since PR 958 the same in
    text_config; `if ids: return list(ids)`. fc takes len(top-level ids), else 3 states
    (llama_eagle3.py 463-464)."""
    if (spec := _speculators(config, "tokenspeed", L)) is not None:
        return spec
    top = config.get(TOP)
    try:
        fc = len(top) if top is not None else 3
    except TypeError:
        fc = 3
    candidates = [config]
    if pr958 and isinstance(config.get("text_config"), dict):
        candidates.append(config["text_config"])
    raw: Any = None
    where = None
    for c in candidates:
        section = c.get("eagle_config")
        value = (section.get("eagle_aux_hidden_state_layer_ids") if isinstance(section, dict) else None) \
            if section is not None else c.get(TOP)
        if value:
            raw = value
            where = ("text_config." if c is not config else "") + (NESTED if section is not None else TOP)
            break
    if raw is None:
        return _guess(L, "tokenspeed", default_capture(L), fc=fc, depends=FLAG)
    if arch in TOKENSPEED_NO_AUX:
        return _capture([], [], where, f"{where} {_show(raw)}: tokenspeed's dense Qwen3 returns no aux states "
                        "(qwen3.py Qwen3Model.forward returns (hidden_states, None))", fc=fc,
                        fails="the target model returns no aux states", depends=FLAG)
    if pr958 and arch in TOKENSPEED_K3:
        # kimi_k3.py 2580-2599: ids unchanged (one-based completed layers), sorted, unique, 1..L
        k3 = list(raw) if isinstance(raw, (list, tuple)) else [raw]
        bounds = [_b(v, 0, 1, L) for v in k3]
        fails = None
        if any(not is_id(v) for v in k3) or k3 != sorted(k3) or len(set(k3)) != len(k3):
            fails = "K3 needs the ids sorted ascending and unique: ValueError at start-up"
        elif None in bounds:
            fails = f"K3 needs every id in 1..{L}: ValueError at start-up"
        return _capture(k3, bounds, where, f"{where} {_show(raw)}, read as b = id (Kimi K3, PR 958)",
                        fc=fc, fails=fails, depends=FLAG)
    values, error = _plus_one(raw)
    if values is None:
        return _capture([raw], [], where, f"{where} {_show(raw)}: {error}", fc=fc, fails=error, depends=FLAG)
    before_only = arch in TOKENSPEED_BEFORE or (pr958 and arch in TOKENSPEED_QWEN35)
    bounds = [_b(v, 1, 0, L - 1) for v in values]  # captured before layer id + 1: id L - 1 never is
    # transformer_model.py 250-262: capture index L + 1 is the residual before the final norm (b = L)
    if not before_only:
        bounds = [L if _numeric(v) and v == L else b for v, b in zip(values, bounds, strict=False)]
    how = "read as b = id + 1" + (f" ({arch}: captured before layer id + 1, so id L - 1 and L capture nothing)"
                                  if before_only else
                                  f" (id L = {L}: the residual before the final norm; id L - 1 captures nothing)")
    return _capture(values, bounds, where, f"{where} {_show(raw)}, {how}", fc=fc, depends=FLAG)


def tokenspeed_526(config: Config, L: int, arch: str | None) -> Capture:
    return _tokenspeed(config, L, arch, pr958=False)


def tokenspeed(config: Config, L: int, arch: str | None) -> Capture:
    return _tokenspeed(config, L, arch, pr958=True)


# ------------------------------------------------------------------------------ SpecForge


def specforge(config: Config, L: int, arch: str | None) -> Capture:
    """resolve_eagle_capture_layers (model_providers.py 188-211 @ a6b6b023): the run's
    model.aux_hidden_state_layer_ids (not in the drafter), else eagle_config's ids, else
    [1, L//2-1, L-4]; then exactly three non-negative ints or ValueError (line 206); a layer id
    names the layer's output (a forward hook on layers[id]), b = id + 1."""
    raw = nested(config, "eagle_aux_hidden_state_layer_ids")
    if raw is None:
        ids = [1, L // 2 - 1, L - 4]
        return _guess(L, "SpecForge", ids,
                      why=f"no {NESTED}: SpecForge trains on its default ids {ids} (b = id + 1)")
    try:
        values = list(raw)
    except TypeError:
        values = [raw]
    if len(values) != 3 or any(not isinstance(v, int) or v < 0 for v in values):
        return _capture(values, [], NESTED, f"{NESTED} {_show(raw)}: not three non-negative ints",
                        fc=3, fails="resolve_eagle_capture_layers raises ValueError (exactly three non-negative "
                                    "integers, model_providers.py 206)")
    bounds = [_b(v, 1, 1, L) for v in values]
    fails = None
    if None in bounds:  # eagle3_target_model.py 201-207 @ 507da3e5
        fails = f"a layer id past the last of {L} layers: ValueError (out of bounds)"
    elif len(set(values)) != 3:  # captured_states is a dict keyed by layer: lines 180-228
        fails = "equal ids capture one state: RuntimeError (expected to capture 3 layers)"
    return _capture(values, bounds, NESTED, f"{NESTED} {_show(raw)}, read as b = id + 1 (the layer's output; "
                    "its slots are written in the ids' order)", fc=None, fails=fails)


# ------------------------------------------------------------------------------ the table

Rule = Callable[[Config, int, "str | None"], Capture]


class Range(TypedDict):
    engine: str
    since: str | None
    until: str | None  # None: the engine's current rule
    variant: str | None  # a runner, when the range has two
    rule: Rule
    serves: bool  # False: a training reading (not counted in serve-check's exit)
    source: str  # file, lines @ version or commit


def _r(engine: str, since: str | None, until: str | None, rule: Rule, source: str, *, variant: str | None = None,
       serves: bool = True) -> Range:
    return {"engine": engine, "since": since, "until": until, "variant": variant, "rule": rule, "serves": serves,
            "source": source}


#: `until` is exclusive except where INCLUSIVE says the last version read is the bound
INCLUSIVE = {"0.4.8.post1"}

ENGINES: tuple[Range, ...] = (
    _r("vllm", None, "0.11.1", vllm_before,
       "vllm/v1/worker/gpu_model_runner.py load_model @ vllm 0.11.0 (get_eagle3_aux_hidden_state_layers)"),
    _r("vllm", "0.11.1", "0.18.0", vllm_0_11,
       "vllm/v1/worker/gpu_model_runner.py 4404-4425, vllm/model_executor/models/llama.py 420-428 @ vllm 0.17.0"),
    _r("vllm", "0.18.0", "0.22.0", vllm_0_18,
       "vllm/model_executor/models/llama.py 419-428, interfaces.py 1282-1292, deepseek_v2.py 1236-1240 @ vllm 0.18.0"),
    _r("vllm", "0.22.0", "0.34.0", vllm_0_22_v1, variant="V1 runner", source=(
       "vllm/v1/worker/gpu_model_runner.py 5241-5256 @ vllm 0.22.0, 5207-5222 @ 0.33.0; config/vllm.py 68-77 @ 0.24.0")),
    _r("vllm", "0.22.0", "0.34.0", vllm_0_22_v2, variant="V2 runner", source=(
       "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py 35-49 @ vllm 0.24.0")),
    _r("vllm", "0.34.0", None, vllm,
       "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py 103-140, model_executor/models/interfaces.py 1629-1663, "
       "llama_eagle3.py 184-221, deepseek_v2.py 1545-1587 @ vllm 0.34.0"),
    _r("sglang", None, "0.4.8.post1", sglang_guess_only,
       "python/sglang/srt/model_executor/model_runner.py 307, models/llama.py 700-706 @ sglang 0.4.8.post1"),
    _r("sglang", "0.4.8.post1", "0.5.13", sglang_before,
       "python/sglang/srt/models/llama.py, deepseek_v2.py set_eagle3_layers_to_capture @ sglang 0.5.12"),
    _r("sglang", "0.5.13", "0.5.17", sglang_first_id,
       "python/sglang/srt/models/deepseek_v2.py set_eagle3_layers_to_capture @ sglang 0.5.13 (PR 25454)"),
    _r("sglang", "0.5.17", None, sglang,
       "python/sglang/srt/models/deepseek_v2.py 3458-3473, gpt_oss.py 725-740 and 1337-1352, gemma3_causal.py 671, "
       "gemma4_causal.py 1093, qwen2_moe.py 1153-1156, llama_eagle3.py 156-174, layers/aux_hidden_states.py 84-89, "
       "model_runner_components/spec_aux_hidden_state.py @ sglang 0.5.23 (and 0.5.17)"),
    _r("trtllm", None, None, trtllm,
       "tensorrt_llm/_torch/speculative/eagle3.py Eagle3OneModelSpecMetadata @ 001e6700, "
       "tensorrt_llm/llmapi/llm_args.py EagleDecodingConfig (stored index; not fetched)"),
    _r("tokenspeed", None, "0.1.0", tokenspeed_before,
       "python/tokenspeed/runtime/models/base/causal_lm.py @ 39137672^ (before PR 526)"),
    _r("tokenspeed", "0.1.0", "PR 958", tokenspeed_526,
       "python/tokenspeed/runtime/execution/model_executor.py _eagle_aux_layer_ids @ 39137672 (PR 526)"),
    _r("tokenspeed", "PR 958", None, tokenspeed,
       "python/tokenspeed/runtime/execution/factory.py 45-102, models/base/causal_lm.py 133-143, "
       "base/transformer_model.py 250-262, kimi_k3.py 2580-2599, deepseek_v3.py 1588-1595, qwen3.py, "
       "llama_eagle3.py 460-496 @ f4d8ec6e (PR 958 = 2b504c85)"),
    _r("specforge", None, None, specforge, serves=False, source=(
       "specforge/algorithms/model_providers.py 188-211 @ a6b6b023; "
       "specforge/modeling/target/eagle3_target_model.py (layers[id] forward hook) @ 507da3e5")),
)

#: who reads norm_before_fc (an RMSNorm over the concatenated aux states before fc), and where:
#: (engine, versions, keys read, source)
NORM_BEFORE_FC: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("vLLM", "0.18.0 .. 0.22.0", ("top",), "llama_eagle3.py 153 @ vllm 0.18.0"),
    ("vLLM", "since 0.22.0", ("nested", "top"), "llama_eagle3.py 153-156 @ vllm 0.22.0, 184-188 @ 0.34.0"),
    ("SGLang", "since 0.5.17", ("nested", "top"), "llama_eagle3.py 165-166 @ sglang 0.5.17, 173-174 @ 0.5.23"),
    ("tokenspeed", "since PR 526", ("top",), "llama_eagle3.py 486 @ tokenspeed f4d8ec6e"),
    ("TensorRT-LLM", "", ("nested",), "_torch/models/modeling_speculative.py eagle_config.get(\"norm_before_fc\") "
                                      "(stored index)"),
)
