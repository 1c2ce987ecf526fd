"""How each serving engine (and SpecForge's trainer) reads an EAGLE-3 drafter's config.json into
the boundaries of the target it captures: one rule per engine and version range.

Boundary b (FORMATS.md): 0 the embedding output, b = i + 1 the output of decoder layer i, b = L the
last residual before the final norm. Every rule below was read from the engine's own code; the file,
version or commit is in SOURCES (and docs/serving.md). A rule returns

    {"boundaries": [b, ...] (None where the engine captures nothing for an id), "guessed": bool,
     "ids": [...] | None, "ids_from": "the key read" | None, "why": "..."}

Plain Python (no Textual, no torch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

NESTED = "eagle_config.eagle_aux_hidden_state_layer_ids"
TOP = "eagle_aux_hidden_state_layer_ids"

#: SGLang model files with the first-id rule (PR 25454, sglang 0.5.13+): DeepSeek-V2/V3/V3.2
#: (deepseek_v2.py), Kimi-K2.5 (kimi_k25.py hands the ids to its DeepSeek language model),
#: GLM-4 MoE Lite (glm4_moe_lite.py)
FIRST_ID_ARCHS = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
                  "KimiK25ForConditionalGeneration", "Glm4MoeLiteForCausalLM")
GPT_OSS_ARCHS = ("GptOssForCausalLM",)


#: a drafter's config.json as read: any JSON object (the rules look up the keys they know)
Config = dict[str, Any]


class Capture(TypedDict):
    """What one engine (and version range) captures for a config: a rule's answer."""

    boundaries: list[int | None]  # per id: b, None when the engine's loop never reaches it
    guessed: bool  # the config pins nothing: the engine's default
    ids: list[int]
    ids_from: str | None  # the config key the ids came from
    why: str


def nested(config: Config, key: str) -> Any:
    section = config.get("eagle_config")
    return section.get(key) if isinstance(section, dict) else None


def _ids(value: Any) -> list[int] | None:
    if isinstance(value, (list, tuple)) and value and all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        return list(value)
    return None


def default_capture(L: int) -> list[int]:
    """The guess every engine falls back to: b 2, L//2, L-3 (vLLM and SGLang write it as "input
    of" ids [2, L//2, L-3], TensorRT-LLM and SpecForge as "output of" ids [1, L//2-1, L-4])."""
    return [2, L // 2, L - 3]


def _guess(L: int, who: str, ids: list[int]) -> Capture:
    return {"boundaries": [*default_capture(L)], "guessed": True, "ids": ids, "ids_from": None,
            "why": f"the drafter names no ids {who} reads: {who}'s default {ids}"}


def _explicit(ids: list[int], key: str, bounds: list[int | None], how: str) -> Capture:
    return {"boundaries": bounds, "guessed": False, "ids": ids, "ids_from": key, "why": f"{key} {ids}, {how}"}


def _loop(b: int, L: int, last: bool) -> int | None:
    """b when the engine's capture loop reaches it: the loops capture before layer i (b = i,
    i < L); `last`: b = L (before the final norm) is captured too."""
    return b if 0 <= b < L or (last and b == L) else None


# ------------------------------------------------------------------------------ vLLM


def vllm_before(config: Config, L: int, arch: str | None) -> Capture:
    r = _guess(L, "vLLM", default_capture(L))
    r["why"] = f"vLLM before 0.11.1 ignores the drafter's ids: always {default_capture(L)}"
    return r


def vllm(config: Config, L: int, arch: str | None) -> Capture:
    """Top-level eagle_aux_hidden_state_layer_ids (eagle_config.* is not read for the capture),
    then dflash_config.target_layer_ids + 1, target_layer_ids + 1, eagle_config.layer_ids; an id
    is the boundary itself (captured after layer id - 1; id L is the residual before the norm)."""
    found: tuple[list[int], str, int] | None = None
    for ids, key, shift in (
        (_ids(config.get(TOP)), TOP, 0),
        (_ids((config.get("dflash_config") or {}).get("target_layer_ids")
              if isinstance(config.get("dflash_config"), dict) else None), "dflash_config.target_layer_ids", 1),
        (_ids(config.get("target_layer_ids")), "target_layer_ids", 1),
        (_ids(nested(config, "layer_ids")), "eagle_config.layer_ids", 0),
    ):
        if ids:
            found = (ids, key, shift)
            break
    if found is None:
        r = _guess(L, "vLLM", default_capture(L))
        if nested(config, "eagle_aux_hidden_state_layer_ids") is not None:
            r["why"] += f" ({NESTED} is there, but vLLM reads only the top-level {TOP})"
        return r
    ids, key, shift = found
    return _explicit(ids, key, [_loop(i + shift, L, True) for i in ids],
                     "read as b = id" + (" + 1" if shift else ""))


# ------------------------------------------------------------------------------ SGLang


def _sglang_ids(config: Config) -> list[int] | None:
    """model_runner: eagle_config["eagle_aux_hidden_state_layer_ids"], None on any error (a
    top-level key is never read for the capture)."""
    return _ids(nested(config, "eagle_aux_hidden_state_layer_ids"))


def _sglang(config: Config, L: int, arch: str | None, first_id: bool, gpt_oss: bool) -> Capture:
    ids = _sglang_ids(config)
    if ids is None:
        r = _guess(L, "SGLang", default_capture(L))
        if _ids(config.get(TOP)):
            r["why"] += f" (the top-level {TOP} is there, but SGLang reads only {NESTED})"
        return r
    if first_id and arch in FIRST_ID_ARCHS and ids[0] != 1:
        return _explicit(ids, NESTED, [_loop(i, L, False) for i in ids],
                         f"first id {ids[0]} is not 1: read as b = id ({arch})")
    if gpt_oss and arch in GPT_OSS_ARCHS and max(ids) == L:
        return _explicit(ids, NESTED, [_loop(i, L, True) for i in ids],
                         f"the largest id is L = {L}: read as b = id (gpt-oss)")
    how = "read as b = id + 1"
    if first_id and arch in FIRST_ID_ARCHS:
        how += " (first id 1)"
    return _explicit(ids, NESTED, [_loop(i + 1, L, False) for i in ids], how)


def sglang_before(config: Config, L: int, arch: str | None) -> Capture:
    return _sglang(config, L, arch, first_id=False, gpt_oss=False)


def sglang_first_id(config: Config, L: int, arch: str | None) -> Capture:
    return _sglang(config, L, arch, first_id=True, gpt_oss=False)


def sglang(config: Config, L: int, arch: str | None) -> Capture:
    return _sglang(config, L, arch, first_id=True, gpt_oss=True)


# ------------------------------------------------------------------------------ TensorRT-LLM


def trtllm(config: Config, L: int, arch: str | None) -> Capture:
    """The ids come from the LLM API option speculative_config.eagle3_layers_to_capture, never from
    the drafter's config.json; without it (1, L//2-1, L-4), captured after layer id: b = id + 1."""
    r = _guess(L, "TensorRT-LLM", [1, L // 2 - 1, L - 4])
    r["why"] = (f"TensorRT-LLM does not read the drafter's config.json ids: without the option "
                f"eagle3_layers_to_capture it captures after layers {[1, L // 2 - 1, L - 4]} (b = id + 1)")
    return r


# ------------------------------------------------------------------------------ tokenspeed


def tokenspeed_before(config: Config, L: int, arch: str | None) -> Capture:
    r = _guess(L, "tokenspeed", default_capture(L))
    r["why"] = f"tokenspeed before PR 526 ignores the drafter's ids: always {default_capture(L)}"
    return r


def _tokenspeed(config: Config, L: int, text_config: bool) -> Capture:
    """_eagle_aux_layer_ids: eagle_config.eagle_aux_hidden_state_layer_ids when eagle_config is
    there (then the top-level key is not read), else the top-level key; since PR 958 the same in
    text_config. layers_to_capture = id + 1, captured before layer i (b = i < L); id L (capture
    index L + 1) is the residual before the final norm, b = L."""
    candidates = [config]
    if text_config and isinstance(config.get("text_config"), dict):
        candidates.append(config["text_config"])
    for c in candidates:
        key = NESTED if c.get("eagle_config") is not None else TOP
        ids = _ids(nested(c, "eagle_aux_hidden_state_layer_ids")) if key == NESTED else _ids(c.get(TOP))
        if ids:
            where = ("text_config." if c is not config else "") + key
            bounds = [L if i == L else _loop(i + 1, L, False) for i in ids]
            return _explicit(ids, where, bounds, "read as b = id + 1 (id L: the residual before the final norm)")
    return _guess(L, "tokenspeed", default_capture(L))


def tokenspeed_526(config: Config, L: int, arch: str | None) -> Capture:
    return _tokenspeed(config, L, text_config=False)


def tokenspeed(config: Config, L: int, arch: str | None) -> Capture:
    return _tokenspeed(config, L, text_config=True)


# ------------------------------------------------------------------------------ SpecForge


def specforge(config: Config, L: int, arch: str | None) -> Capture:
    """resolve_eagle_capture_layers: the run's model.aux_hidden_state_layer_ids (not in the
    drafter), else eagle_config.eagle_aux_hidden_state_layer_ids, else [1, L//2-1, L-4]; a layer
    id names the layer's output (HF backend: a forward hook on layers[id]), b = id + 1."""
    ids = _ids(nested(config, "eagle_aux_hidden_state_layer_ids"))
    if ids is None:
        r = _guess(L, "SpecForge", [1, L // 2 - 1, L - 4])
        r["why"] = f"no {NESTED}: SpecForge trains on its default ids {[1, L // 2 - 1, L - 4]} (b = id + 1)"
        return r
    return _explicit(ids, NESTED, [_loop(i + 1, L, True) for i in ids], "read as b = id + 1 (the layer's output)")


# ------------------------------------------------------------------------------ the table

Rule = Callable[[Config, int, "str | None"], Capture]

#: (engine, since, until, rule, serves, source: file @ version or commit). `until` None: the
#: engine's current rule. `serves` False: a training reading (not counted in serve-check's exit).
ENGINES: tuple[tuple[str, str | None, str | None, Rule, bool, str], ...] = (
    ("vllm", None, "0.11.1", vllm_before, True,
     "vllm/v1/worker/gpu_model_runner.py load_model @ vllm 0.11.0 (get_eagle3_aux_hidden_state_layers)"),
    ("vllm", "0.11.1", None, vllm, True,
     "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py get_eagle3_aux_layers_from_config, "
     "vllm/model_executor/models/interfaces.py EagleModelMixin @ vllm 0.34.0 (PR 25961 in 0.11.1)"),
    ("sglang", None, "0.5.13", sglang_before, True,
     "python/sglang/srt/models/llama.py, deepseek_v2.py set_eagle3_layers_to_capture @ sglang 0.5.12"),
    ("sglang", "0.5.13", "0.5.17", sglang_first_id, True,
     "python/sglang/srt/models/deepseek_v2.py set_eagle3_layers_to_capture @ sglang 0.5.13 (PR 25454)"),
    ("sglang", "0.5.17", None, sglang, True,
     "python/sglang/srt/models/{deepseek_v2,gpt_oss,llama}.py set_eagle3_layers_to_capture, "
     "model_runner_components/spec_aux_hidden_state.py @ sglang 0.5.23 (PR 32334 in 0.5.17)"),
    ("trtllm", None, None, trtllm, True,
     "tensorrt_llm/_torch/speculative/eagle3.py Eagle3OneModelSpecMetadata @ 001e6700, "
     "tensorrt_llm/llmapi/llm_args.py EagleDecodingConfig (stored index; not fetched)"),
    ("tokenspeed", None, "0.1.0", tokenspeed_before, True,
     "python/tokenspeed/runtime/models/base/causal_lm.py @ 39137672^ (before PR 526)"),
    ("tokenspeed", "0.1.0", "PR 958", tokenspeed_526, True,
     "python/tokenspeed/runtime/execution/model_executor.py _eagle_aux_layer_ids @ 39137672 (PR 526)"),
    ("tokenspeed", "PR 958", None, tokenspeed, True,
     "python/tokenspeed/runtime/execution/factory.py _eagle_aux_layer_ids @ f4d8ec6e (PR 958, 2b504c85)"),
    ("specforge", None, None, specforge, False,
     "specforge/algorithms/model_providers.py resolve_eagle_capture_layers @ a6b6b023; "
     "specforge/modeling/target/eagle3_target_model.py (layers[id] forward hook) @ 507da3e5"),
)

#: who applies the drafter's norm_before_fc (an RMSNorm over the concatenated aux states before fc)
NORM_BEFORE_FC = {
    "vllm": "vLLM 0.34.0 (not 0.11.1)",
    "sglang": "SGLang 0.5.17+ (PR 32334; not 0.5.16)",
    "tokenspeed": "tokenspeed since PR 526",
}
