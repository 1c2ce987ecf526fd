"""SGLang: which ids it reads from a drafter's config.json (eagle_config's only), into which
boundaries, for which targets, release by release (every release from 0.4.8 to 0.5.23, the .post
ones included, read from its wheel)."""

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
    plus_one,
    refused,
    show,
    to_b,
)
from eagle3_tui.dataset.serving.versions import Change, at_least

ENGINE = "sglang"
RELEASES = ("0.4.8", "0.4.8.post1", "0.4.9", "0.4.9.post1", "0.4.9.post2", "0.4.9.post3", "0.4.9.post4",
            "0.4.9.post5", "0.4.9.post6", "0.4.10", "0.4.10.post1", "0.4.10.post2", "0.5.1", "0.5.1.post1",
            "0.5.1.post2", "0.5.1.post3", "0.5.2", "0.5.3", "0.5.3.post1", "0.5.3.post2", "0.5.3.post3", "0.5.4",
            "0.5.4.post1", "0.5.4.post2", "0.5.4.post3", "0.5.5", "0.5.5.post1", "0.5.5.post2", "0.5.5.post3",
            "0.5.6", "0.5.6.post1", "0.5.6.post2", "0.5.7", "0.5.8", "0.5.8.post1", "0.5.9", "0.5.10",
            "0.5.10.post1", "0.5.11", "0.5.12", "0.5.12.post1", "0.5.13", "0.5.13.post1", "0.5.14", "0.5.15",
            "0.5.15.post1", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23")

CHANGES = (
    Change("0.4.8", "the target's default ids only (set_eagle3_layers_to_capture() with none); fc for 3",
           "python/sglang/srt/model_executor/model_runner.py 307, models/llama.py 700-706 @ 0.4.8"),
    Change("0.4.9", "eagle_config's ids, b = id + 1; Qwen3 and Qwen3-MoE take EAGLE-3; the CUDA graphs are "
                    "recorded with the default ids before the drafter's are set",
           "model_runner.py 314 and 329-341, cuda_graph_runner.py 297-298, qwen3.py 461-474, qwen3_moe.py 759-772 "
           "@ 0.4.9"),
    Change("0.5.1", "gpt-oss takes EAGLE-3", "models/gpt_oss.py 1135 @ 0.5.1"),
    Change("0.5.2", "Qwen2 and Qwen2-MoE take EAGLE-3", "qwen2.py 637, qwen2_moe.py 758 @ 0.5.2"),
    Change("0.5.4.post2", "the DeepSeek-V2 family takes EAGLE-3; Qwen2/Qwen3-MoE flag self.layers[id + 1] (an id "
                          "≥ L - 1 is an IndexError) and the flags of the graphs' default ids stay set",
           "deepseek_v2.py 3779, qwen2_moe.py 562-565 @ 0.5.4.post2"),
    Change("0.5.6.post1", "Mistral Large 3 (a DeepSeek-V3) takes EAGLE-3", "mistral_large_3.py 11 @ 0.5.6.post1"),
    Change("0.5.8", "eagle_config.use_aux_hidden_state is read; GLM-4 MoE Lite", "model_runner.py 320-344 @ 0.5.8"),
    Change("0.5.9", "Qwen3-Next (flags, as Qwen-MoE) and GLM MoE DSA take EAGLE-3",
           "qwen3_next.py 849-852 and 1139, glm4_moe.py 1283 @ 0.5.9"),
    Change("0.5.10", "Kimi K2.5 takes EAGLE-3", "kimi_k25.py 841 @ 0.5.10"),
    Change("0.5.11", "the drafter's ids are set before the CUDA graphs are recorded",
           "model_runner.py 764 and 814-822 @ 0.5.11"),
    Change("0.5.12", "fc for num_aux_hidden_states or eagle_config's ids; Gemma 3 and 4 take EAGLE-3, id L - 1 "
                     "is b = L", "llama_eagle3.py 154-160, gemma3_causal.py 660-663 and 897-906, gemma3_mm.py 497-499, "
                               "gemma4_causal.py 856-858 @ 0.5.12"),
    Change("0.5.13", "DeepSeek family (its subclasses too): + 1 only when the first id is 1 (PR 25454)",
           "deepseek_v2.py 2752-2755, mistral_large_3.py 12, glm4_moe.py 1481 @ 0.5.13"),
    Change("0.5.17", "gpt-oss keeps ids whose largest is L and takes id L - 1 as b = L; the DeepSeek family fails "
                     "on an id that captures nothing; norm_before_fc is read",
           "gpt_oss.py 736 and 1340, deepseek_v2.py (AuxHiddenStatePacker), llama_eagle3.py 165-166 @ 0.5.17"),
    Change("0.5.22", "Llama captures through its layers' boundary: id -1 is b 0 (the embedding)",
           "llama.py 478-487, layers/layer_boundary/stage.py 354-367 @ 0.5.22"),
)

#: the targets' first release read whose model class has set_eagle3_layers_to_capture; before it,
#: start-up fails (model_runner.py 307 @ 0.4.8 and 341 @ 0.4.9 call it: AttributeError; from 0.5.16 a
#: ValueError, attention_backend_setup.py 54-61 @ 0.5.23). A target not named has it in every release.
HOOK_SINCE = {
    "Qwen3ForCausalLM": "0.4.9", "Qwen3MoeForCausalLM": "0.4.9", "GptOssForCausalLM": "0.5.1",
    "Qwen2ForCausalLM": "0.5.2", "Qwen2MoeForCausalLM": "0.5.2", "DeepseekV2ForCausalLM": "0.5.4.post2",
    "DeepseekV3ForCausalLM": "0.5.4.post2", "DeepseekV32ForCausalLM": "0.5.4.post2",
    "MistralLarge3ForCausalLM": "0.5.6.post1", "Glm4MoeLiteForCausalLM": "0.5.8", "Qwen3NextForCausalLM": "0.5.9",
    "GlmMoeDsaForCausalLM": "0.5.9", "KimiK25ForConditionalGeneration": "0.5.10", "Gemma3ForCausalLM": "0.5.12",
    "Gemma3ForConditionalGeneration": "0.5.12", "Gemma4ForCausalLM": "0.5.12",
    "Gemma4ForConditionalGeneration": "0.5.12",
}
#: the first-id rule (deepseek_v2.py 2752-2755 @ 0.5.13) and, from 0.5.17, AuxHiddenStatePacker (a
#: missing capture fails, aux_hidden_states.py 86 @ 0.5.23): DeepSeek-V2/V3/V3.2, the models that hand
#: the ids to a DeepSeek language model (kimi_k25.py, glm4_moe_lite.py) and its subclasses
#: MistralLarge3ForCausalLM (mistral_large_3.py 12) and GlmMoeDsaForCausalLM (glm4_moe.py 1481 @ 0.5.13)
DEEPSEEK = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
            "KimiK25ForConditionalGeneration", "Glm4MoeLiteForCausalLM", "MistralLarge3ForCausalLM",
            "GlmMoeDsaForCausalLM")
#: models that also capture after the last layer (b = L) when id + 1 == L (gemma3_causal.py 660-663,
#: gemma4_causal.py 856-858 @ 0.5.12; 671 and 1093 @ 0.5.23)
LAST = ("Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration")
GPT_OSS = ("GptOssForCausalLM",)
#: models that flag self.layers[id + 1] (an id ≥ L - 1 is an IndexError at start-up), and from which
#: release: qwen2_moe.py 562-565 @ 0.5.4.post2 (1153-1156 @ 0.5.23), qwen3_next.py 849-852 @ 0.5.9
FLAGGED = {"Qwen2MoeForCausalLM": "0.5.4.post2", "Qwen3MoeForCausalLM": "0.5.4.post2",
           "Qwen3NextForCausalLM": "0.5.9"}
#: captures `hidden_states + residual` before layer 0 with residual None (llama.py 331-332 @ 0.4.9,
#: 440-441 @ 0.5.21): id -1 fails until 0.5.22
UNGUARDED_UNTIL_0522 = ("LlamaForCausalLM",)
GRAPHS = ("CUDA graphs (on by default): before 0.5.11 they are recorded with the target's default ids before "
          "the drafter's are set (cuda_graph_runner.py 297-298 @ 0.4.9, 648 @ 0.5.10.post1); "
          "--disable-cuda-graph feeds the drafter's everywhere")


def _no_hook(arch: str | None, v: str) -> str | None:
    since = HOOK_SINCE.get(arch or "")
    if since is None or at_least(v, since):
        return None
    return (f"{arch} has no set_eagle3_layers_to_capture before {since} (model_runner.py calls it: "
            "AttributeError; from 0.5.16 a ValueError)")


def _speculators(config: Config) -> Capture | None:
    if "speculators_model_type" not in config:
        return None
    return refused(f"a speculators-format config (speculators_model_type {show(config['speculators_model_type'])}): "
                   "SGLang does not read the speculators format (no code reads speculators_model_type)")


def rule(config: Config, L: int, arch: str | None, v: str, variant: str | None = None) -> Capture:
    """What SGLang at release v does with this drafter on this target."""
    if (spec := _speculators(config)) is not None:
        return spec
    if (why := _no_hook(arch, v)) is not None:
        return refused(why)
    if not at_least(v, "0.4.9"):
        return guess(L, "SGLang", default_capture(L), why=(
            f"SGLang before 0.4.9 ignores the drafter's ids: model_runner.py 307 calls "
            f"set_eagle3_layers_to_capture() with none: always {default_capture(L)}"))
    if at_least(v, "0.5.8") and nested(config, "use_aux_hidden_state") is False:
        return capture([], [], None, "eagle_config.use_aux_hidden_state is false: SGLang captures no aux states "
                       "(model_runner.py 336-338 @ 0.5.8; spec_aux_hidden_state.py @ 0.5.23)")
    section = config.get("eagle_config")
    # model_runner.py 329-341 @ 0.4.9: eagle_config["eagle_aux_hidden_state_layer_ids"], any error -> None
    raw = section.get("eagle_aux_hidden_state_layer_ids") if isinstance(section, dict) else None
    fc = fc_nested(config) if at_least(v, "0.5.12") else 3  # llama_eagle3.py 124-127 @ 0.4.9: 3 states
    if raw is None:
        r = guess(L, "SGLang", default_capture(L), fc=fc)
        if config.get(TOP) is not None:
            r["why"] += f" (the top-level {TOP} is there, but SGLang reads only {NESTED})"
        return r
    return _graphs(_read(raw, L, arch, v, fc), L, arch, v, fc)


def _read(raw: Any, L: int, arch: str | None, v: str, fc: int) -> Capture:
    deepseek = arch in DEEPSEEK and at_least(v, "0.5.13")
    values, error = plus_one(raw)
    if deepseek and isinstance(raw, list) and not (raw and raw[0] == 1):
        # deepseek_v2.py 2752-2755 @ 0.5.13: `if layer_ids and layer_ids[0] == 1` (+ 1) else list(layer_ids)
        values = list(raw)
        bounds = [to_b(x, 0, 0, L - 1) for x in values]
        how = f"first id {show(values[0]) if values else 'none'} is not 1: read as b = id ({arch})"
    elif values is None:
        return capture(raw if isinstance(raw, list) else [raw], [], NESTED, f"{NESTED} {show(raw)}: {error}",
                       fc=fc, fails=error)
    elif at_least(v, "0.5.17") and arch in GPT_OSS and values and max(values) == L:
        bounds = [to_b(x, 0, 0, L) for x in values]  # gpt_oss.py 1340 @ 0.5.17: ids kept
        how = f"the largest id is L = {L}: read as b = id (gpt-oss)"
    else:
        last = arch in LAST or (at_least(v, "0.5.17") and arch in GPT_OSS)
        bounds = [to_b(x, 1, 0, L if last else L - 1) for x in values]
        how = "read as b = id + 1" + (" (first id 1)" if deepseek else "")
        if last:
            how += f"; id L - 1 = {L - 1} is the residual before the final norm (b = L, {arch})"
        flagged = FLAGGED.get(arch or "")
        if flagged and at_least(v, flagged) and (over := [x for x in values if x + 1 >= L]):
            return capture(list(values), bounds, NESTED, f"{NESTED} {show(raw)}: {how}", fc=fc, fails=(
                f"id {show(over[0])}: self.layers[id + 1] is past the last of {L} layers: IndexError ({arch})"))
    return _fails(list(values), bounds, raw, how, L, arch, v, fc)


def _fails(values: list[Any], bounds: list[int | None], raw: Any, how: str, L: int, arch: str | None, v: str,
           fc: int) -> Capture:
    """What fails at the first forward: no ids at all, a missing capture under the Packer, id -1
    before layer 0 where there is no residual yet."""
    fails = None
    if values == []:
        how = "an empty list: SGLang captures nothing (it does not guess)"
        fails = "the drafter is fed no aux states"
    elif at_least(v, "0.5.17") and arch in DEEPSEEK and None in bounds:
        fails = ("an id captures nothing and AuxHiddenStatePacker.finalize raises "
                 f"(captured fewer than {len(values)}; aux_hidden_states.py 86 @ 0.5.23)")
    elif arch in UNGUARDED_UNTIL_0522 and not at_least(v, "0.5.22") and 0 in bounds:
        fails = "id -1: hidden_states + residual before layer 0, with residual None, raises TypeError"
    return capture(values, bounds, NESTED, f"{NESTED} {show(raw)}, {how}", fc=fc, fails=fails,
                   fails_at="first forward" if fails else None)


def _graphs(c: Capture, L: int, arch: str | None, v: str, fc: int) -> Capture:
    """Before 0.5.11 the CUDA graphs replay the default ids' capture; where the model flags its
    layers (FLAGGED), the default's flags also stay set, so the prefill captures both sets."""
    default = default_capture(L)
    if at_least(v, "0.5.11") or c.get("fails") or not c["states"] or c["states"] == default:
        return c
    c["graph_states"] = default
    c["depends"] = GRAPHS
    flagged = FLAGGED.get(arch or "")
    if flagged and at_least(v, flagged):
        both = sorted(set(c["states"]) | set(default))
        c["why"] += (f"; the flags of the graphs' default layers stay set (qwen2_moe.py 562-565 @ 0.5.4.post2), "
                     f"so the prefill captures b {', '.join(map(str, both))}")
        if len(both) != fc:
            c["fails"] = f"its fc takes {fc} states and the prefill captures {len(both)}: the shapes do not fit"
            c["fails_at"], c["states"] = "first forward", []
        else:
            c["states"] = both
    return c
