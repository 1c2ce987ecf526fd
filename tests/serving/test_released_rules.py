"""Issue 42: the rules as the engines' released code has them, one test per item of the issue, each
naming the file, lines and release it was read from (docs/serving.md has the same citations).

Where the issue's list and the code disagree, the test follows the code (said in each docstring)."""

from __future__ import annotations

import itertools
import json

import pytest

from eagle3_tui.dataset.serving import NAMES, check, exit_code, format_check
from eagle3_tui.dataset.serving.table import rule_at
from eagle3_tui.dataset.serving.versions import label, within

NESTED = lambda ids, **more: {"eagle_config": {"eagle_aux_hidden_state_layer_ids": ids, **more}}  # noqa: E731
vllm_0_11, vllm_0_18, vllm = rule_at("vllm", "0.17.0"), rule_at("vllm", "0.18.0"), rule_at("vllm", "0.34.0")
vllm_0_22_v1, vllm_0_22_v2 = rule_at("vllm", "0.24.0", "V1 runner"), rule_at("vllm", "0.24.0", "V2 runner")
sglang_guess_only, sglang_before, sglang = rule_at("sglang", "0.4.8.post1"), rule_at("sglang", "0.5.12"), \
    rule_at("sglang", "0.5.23")
tokenspeed, trtllm, specforge = rule_at("tokenspeed", "0.1.1"), rule_at("trtllm"), rule_at("specforge")


def data(L, bounds):
    return {"layers": L, "boundaries": bounds, "groups": []}


def row(result, engine, version=None, variant=None):
    """The row of an engine whose range holds `version` (rows merge the ranges that read alike)."""
    rows = [e for e in result["engines"] if e["engine"] == engine and (variant is None or e["variant"] == variant)
            and (version is None or within(version, e["since"], e["until"]))]
    assert len(rows) == 1, rows
    return rows[0]


def codes(result, severity=None):
    return [f["code"] for f in result["findings"] if severity is None or f["severity"] == severity]


# ------------------------------------------------------------------ item 1: vLLM's V1 runner reads eagle_config


def test_item1_vllm_0_22_v1_runner_reads_eagle_config_ids_without_plus_one():
    # vllm 0.22.0 vllm/v1/worker/gpu_model_runner.py 5241-5256 (0.33.0: 5207-5222): no top-level key ->
    # eagle_config["eagle_aux_hidden_state_layer_ids"], returned as they are (b = id)
    v1 = vllm_0_22_v1(NESTED([1, 16, 29]), 32, "GptOssForCausalLM")
    assert v1["boundaries"] == [1, 16, 29] and v1["ids_from"] == "eagle_config.eagle_aux_hidden_state_layer_ids"
    # vllm 0.24.0 eagle3_utils.py 35-49 (runner V2): the top level and dflash_config only
    assert vllm_0_22_v2(NESTED([1, 16, 29]), 32, "GptOssForCausalLM")["guessed"]
    # vllm 0.24.0 vllm/config/vllm.py 68-77: which runner is the default depends on the target
    assert "V1 model runner by default at 0.24.0" in v1["depends"]
    assert "V2 model runner by default at 0.24.0" in vllm_0_22_v1(NESTED([1]), 32, "LlamaForCausalLM")["depends"]
    assert "cannot be told" in vllm_0_22_v1(NESTED([1]), 32, None)["depends"]


# ------------------------------------------------------------------ item 2: id L, DeepSeek, dedupe, dspark


def test_item2_vllm_captures_id_L_from_0_18_and_deepseek_only_by_0_33():
    top = {"eagle_aux_hidden_state_layer_ids": [2, 16, 32]}
    # vllm 0.17.0 llama.py 420-428: captured before layer idx only, id L never
    assert vllm_0_11(top, 32, "LlamaForCausalLM")["boundaries"] == [2, 16, None]
    # vllm 0.18.0 llama.py 419-428 (_maybe_add_hidden_state(..., idx + 1), PR 36063): id L is b = L
    assert vllm_0_18(top, 32, "LlamaForCausalLM")["boundaries"] == [2, 16, 32]
    # vllm 0.18.0 deepseek_v2.py 1236-1240 and 0.24.0 1336-1340: before the layer only
    assert vllm_0_18(top, 32, "DeepseekV3ForCausalLM")["boundaries"] == [2, 16, None]
    assert vllm_0_22_v2(top, 32, "MistralLarge3ForCausalLM")["boundaries"] == [2, 16, None]
    # vllm 0.34.0 deepseek_v2.py 1586-1587 (the end_layer check; the issue said 0.34 only: it is in 0.33.0 too)
    assert vllm(top, 32, "DeepseekV3ForCausalLM")["boundaries"] == [2, 16, 32]


def test_item2_vllm_0_34_dedupes_and_reads_dspark_ids():
    # vllm 0.34.0 interfaces.py 1630: tuple(sorted(set(layers))): one state per boundary
    r = vllm({"eagle_aux_hidden_state_layer_ids": [2, 16, 16]}, 32, "LlamaForCausalLM")
    assert r["fails"] and "2 are captured" in r["fails"]  # fc (3, from num/nested/default) meets 2 states
    # eagle3_utils.py 116-125 @ 0.34.0: dspark_target_layer_ids + 1, as they are for model_type deepseek_v41
    assert vllm({"dspark_target_layer_ids": [1, 15, 28]}, 32, None)["boundaries"] == [2, 16, 29]
    assert vllm({"dspark_target_layer_ids": [2, 16, 29], "model_type": "deepseek_v41"}, 32, None)[
        "boundaries"] == [2, 16, 29]


# ------------------------------------------------------------------ item 3: SGLang 0.4.8.post1 guesses


def test_item3_sglang_0_4_8_post1_ignores_the_drafter_ids():
    # sglang 0.4.8.post1 model_runner.py 307: self.model.set_eagle3_layers_to_capture() with no ids
    # (llama.py 700-706: [2, L // 2, L - 3])
    r = sglang_guess_only(NESTED([1, 14, 26]), 32, "LlamaForCausalLM")
    assert r["guessed"] and r["boundaries"] == [2, 16, 29]
    assert sglang_before(NESTED([1, 14, 26]), 32, "LlamaForCausalLM")["boundaries"] == [2, 15, 27]


# ------------------------------------------------------------------ item 4: the first-id rule's subclasses


@pytest.mark.parametrize("arch", ["MistralLarge3ForCausalLM", "GlmMoeDsaForCausalLM"])
def test_item4_first_id_rule_covers_deepseek_subclasses(arch):
    # sglang 0.5.23 mistral_large_3.py 12 (class MistralLarge3ForCausalLM(DeepseekV3ForCausalLM)) and
    # glm4_moe.py 1284 (class GlmMoeDsaForCausalLM(DeepseekV2ForCausalLM)): deepseek_v2.py 3458-3473
    assert sglang(NESTED([2, 30, 58]), 61, arch)["boundaries"] == [2, 30, 58]
    assert sglang(NESTED([1, 29, 57]), 61, arch)["boundaries"] == [2, 30, 58]


# ------------------------------------------------------------------ item 5: last boundary, MoE, Packer


@pytest.mark.parametrize("arch", ["Gemma3ForCausalLM", "Gemma4ForCausalLM", "GptOssForCausalLM"])
def test_item5_sglang_id_L_minus_1_is_the_last_residual_on_gemma_and_gpt_oss(arch):
    # sglang 0.5.23 gemma3_causal.py 671, gemma4_causal.py 1093 (`num_layers in self.layers_to_capture`),
    # gpt_oss.py 725-740 (the end_layer capture; 0.5.17: line 736 `i + 1 in layers_to_capture`)
    r = sglang(NESTED([1, 15, 31]), 32, arch)
    assert r["boundaries"] == [2, 16, 32] and not r["fails"]
    r = check(NESTED([1, 15, 31]), data(32, [2, 16, 32]), arch)
    assert row(r, "sglang", "0.5.23")["matches"]


@pytest.mark.parametrize("arch", ["Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM", "Qwen3NextForCausalLM"])
def test_item5_sglang_moe_models_fail_at_start_up_on_id_L_minus_1(arch):
    # sglang 0.5.23 qwen2_moe.py 1153-1156, qwen3_next.py 954-957: setattr(self.layers[id + 1], ...)
    r = sglang(NESTED([1, 15, 31]), 32, arch)
    assert "IndexError" in r["fails"] and r["fails_at"] == "start-up" and r["boundaries"] == [None] * 3
    assert not sglang(NESTED([1, 15, 29]), 32, arch)["fails"]


def test_item5_sglang_deepseek_packer_fails_on_a_missing_capture():
    # sglang 0.5.23 layers/aux_hidden_states.py 84-89: finalize raises RuntimeError when fewer states
    # were captured than layers_to_capture names (an assert at 0.5.17); only the Packer's users
    # (deepseek_v2.py 3175), not llama.py (AuxHiddenStateList): the issue said "any missing capture"
    r = sglang(NESTED([2, 30, 61]), 61, "DeepseekV3ForCausalLM")
    assert "AuxHiddenStatePacker.finalize raises" in r["fails"]
    llama = sglang(NESTED([2, 30, 61]), 61, "LlamaForCausalLM")
    assert "2 are captured" in llama["fails"]  # a Llama gets 2 states into an fc built for 3: the shapes fail


# ------------------------------------------------------------------ item 6: tokenspeed by architecture


def test_item6_tokenspeed_k3_takes_ids_unchanged_sorted_unique_in_range():
    # tokenspeed kimi_k3.py 2580-2599 @ f4d8ec6e (PR 958): one-based completed-layer ids, b = id
    assert tokenspeed(NESTED([2, 30, 58]), 61, "KimiK3ForConditionalGeneration")["boundaries"] == [2, 30, 58]
    assert "sorted ascending and unique" in tokenspeed(NESTED([30, 2, 58]), 61, "KimiK3ForConditionalGeneration")["fails"]
    assert "in 1..61" in tokenspeed(NESTED([0, 30, 58]), 61, "KimiK3ForConditionalGeneration")["fails"]


def test_item6_tokenspeed_id_L_only_in_the_base_transformer_and_no_aux_on_dense_qwen3():
    top = {"eagle_aux_hidden_state_layer_ids": [1, 15, 32]}
    # base/transformer_model.py 250-262: capture index L + 1 is the residual before the final norm
    assert tokenspeed(top, 32, "LlamaForCausalLM")["boundaries"] == [2, 16, 32]
    # deepseek_v3.py 1588-1595 and qwen3_5.py 1027-1032: before layer i only
    assert tokenspeed(top, 32, "DeepseekV3ForCausalLM")["boundaries"] == [2, 16, None]
    assert tokenspeed(top, 32, "Qwen3_5MoeForCausalLM")["boundaries"] == [2, 16, None]
    # qwen3.py 389 @ 0.1.1: Qwen3Model.forward returns (hidden_states, None); the drafter then gets the
    # last hidden state and skips its fc (llama_eagle3.py 489 @ 0.1.1): it runs, fed no aux state
    dense = tokenspeed(top, 32, "Qwen3ForCausalLM")
    assert "returns no aux states" in dense["why"] and dense["states"] == [] and not dense["fails"]
    # factory.py 99: --eagle3-layers-to-capture replaces the drafter's ids
    assert "--eagle3-layers-to-capture" in tokenspeed(top, 32, "LlamaForCausalLM")["depends"]


# ------------------------------------------------------------------ item 7: norm_before_fc readers


def test_item7_nested_norm_before_fc_is_ignored_by_tokenspeed_and_top_level_by_trtllm():
    # tokenspeed llama_eagle3.py 486 @ f4d8ec6e: getattr(config, "norm_before_fc") (top level only);
    # TensorRT-LLM modeling_speculative.py: eagle_config.get("norm_before_fc") (nested only);
    # vLLM llama_eagle3.py 153-156 @ 0.22.0 and SGLang llama_eagle3.py 173-174 @ 0.5.23: either
    gpt_oss = check(NESTED([1, 15, 28], norm_before_fc=True), data(32, [2, 16, 29]), "LlamaForCausalLM")
    msg = next(f for f in gpt_oss["findings"] if f["code"] == "serving_norm_before_fc")
    assert msg["severity"] == "warning"
    assert "ignored by" in msg["message"] and "tokenspeed 0.1.0 ≤ v (reads only the top level)" in msg["message"]
    assert "TensorRT-LLM" in msg["message"].split("ignored by")[0]  # applied there
    top = check({**NESTED([1, 15, 28]), "norm_before_fc": True}, data(32, [2, 16, 29]), "LlamaForCausalLM")
    msg = next(f for f in top["findings"] if f["code"] == "serving_norm_before_fc")["message"]
    assert "TensorRT-LLM (reads only eagle_config)" in msg


# ------------------------------------------------------------------ item 8: TensorRT-LLM's -1


def test_item8_post_norm_data_names_trtllm_minus_one_instead_of_no_engine():
    # tensorrt_llm/llmapi/llm_args.py EagleDecodingConfig.validate_eagle_config (stored index):
    # eagle3_model_arch == "mistral_large3" and no option -> eagle3_layers_to_capture = {-1}
    r = check(NESTED([1, 15]), data(32, [2, 16, 33]), "MistralLarge3ForCausalLM")
    post = next(f["message"] for f in r["findings"] if f["code"] == "serving_post_norm")
    assert "no engine" not in post and "{-1}" in post and "mistral_large3" in post
    assert "mistral_large3" in trtllm({}, 32, None)["depends"]


# ------------------------------------------------------------------ item 9: bad ids


@pytest.mark.parametrize("ids, value", [
    (["2", 16, 29], '"2"'), ([2.5, 16, 29], "2.5"), ([True, 16, 29], "true"), ({"a": 2}, '{"a": 2}'),
    ([[2], 16, 29], "[2]"), ([], "an empty list"), ([2, 16, 16], "16 named more than once"),
])
def test_item9_bad_ids_are_an_error_naming_the_value_and_the_engines(ids, value):
    r = check(NESTED(ids), data(32, [3, 17, 30]), "LlamaForCausalLM")
    assert exit_code(r) == 1 and "serving_bad_ids" in codes(r, "error")
    msg = next(f["message"] for f in r["findings"] if f["code"] == "serving_bad_ids")
    assert value in msg and label(row(r, "sglang", "0.5.23")) in msg and "SpecForge" in msg


def test_item9_what_each_engine_does_with_them_is_the_code_s_not_the_issue_s():
    """The issue said SGLang and tokenspeed fail at id + 1 on floats and bools: `4.0 + 1` and `True + 1`
    do not raise (llama.py 941 @ sglang 0.5.23; causal_lm.py 143 @ tokenspeed f4d8ec6e); a string does."""
    assert "TypeError" in sglang(NESTED(["2", 16, 29]), 32, "LlamaForCausalLM")["fails"]
    assert "TypeError" in tokenspeed(NESTED(["2", 16, 29]), 32, "LlamaForCausalLM")["fails"]
    assert sglang(NESTED([2.0, 16, 29]), 32, "LlamaForCausalLM")["boundaries"] == [3, 17, 30]
    assert sglang(NESTED([True, 16, 29]), 32, "LlamaForCausalLM")["boundaries"] == [2, 17, 30]
    # an empty nested list: SGLang captures nothing (it does not guess); tokenspeed (`if ids:`) guesses
    assert sglang(NESTED([]), 32, "LlamaForCausalLM")["fails"] and not sglang(NESTED([]), 32, None)["guessed"]
    assert tokenspeed(NESTED([]), 32, "LlamaForCausalLM")["guessed"]
    # model_providers.py 206 @ a6b6b023: anything but three non-negative ints raises
    assert "ValueError" in specforge(NESTED([2.0, 16, 29]), 32, None)["fails"]
    # vLLM 0.34.0 interfaces.py 1630: sorted(set()) of a string and ints raises; 0.18 captures nothing for it
    assert "TypeError" in vllm({"eagle_aux_hidden_state_layer_ids": ["2", 16, 29]}, 32, None)["fails"]
    assert vllm_0_18({"eagle_aux_hidden_state_layer_ids": ["2", 16, 29]}, 32, None)["boundaries"] == [None, 16, 29]


# ------------------------------------------------------------------ item 10: the number of states


def test_item10_fc_size_per_engine_and_specforge_refuses_two_ids():
    # vLLM llama_eagle3.py 209-221 @ 0.34.0 and SGLang llama_eagle3.py 156-161 @ 0.5.23: len(eagle_config ids);
    # tokenspeed llama_eagle3.py 460-464: len(top-level ids), else 3; model_providers.py 206: exactly 3
    two = NESTED([1, 15])
    assert sglang(two, 32, "LlamaForCausalLM")["fc_states"] == 2
    assert tokenspeed(two, 32, "LlamaForCausalLM")["fc_states"] == 3
    assert "ValueError" in specforge(two, 32, None)["fails"]
    r = check(two, data(32, [2, 16]), "LlamaForCausalLM")
    assert row(r, "sglang", "0.5.23")["matches"]
    ts = row(r, "tokenspeed", "0.1.1")
    assert "fc takes 3 states" in ts["fails"] and not ts["matches"]  # fc for 3 (no top-level ids), 2 captured
    assert "serving_slot_count" in codes(r) and exit_code(r) == 1


# ------------------------------------------------------------------ item 11: slot order


def test_item11_slots_stored_out_of_layer_order_are_said():
    both = {"eagle_aux_hidden_state_layer_ids": [2, 16, 29], **NESTED([1, 15, 28])}
    r = check(both, data(32, [29, 2, 16]), "LlamaForCausalLM")
    assert "serving_slot_order" in codes(r, "warning")
    assert r["data"]["slots"] == [29, 2, 16] and r["data"]["boundaries"] == [2, 16, 29]
    assert "serving_slot_order" not in codes(check(both, data(32, [2, 16, 29]), "LlamaForCausalLM"))


# ------------------------------------------------------------------ item 12: formats and use_aux_hidden_state


def test_item12_speculators_format_fails_on_sglang_and_tokenspeed():
    # vllm 0.34.0 transformers_utils/configs/speculators/algos.py 16-51 keeps the top-level ids;
    # no code in sglang 0.5.23 or tokenspeed f4d8ec6e reads speculators_model_type
    spec = {"speculators_model_type": "eagle3", "eagle_aux_hidden_state_layer_ids": [2, 16, 29],
            "transformer_layer_config": {"model_type": "llama"}}
    r = check(spec, data(32, [2, 16, 29]), "LlamaForCausalLM")
    assert row(r, "vllm", "0.34.0")["matches"]
    assert "speculators" in row(r, "sglang", "0.5.23")["fails"]
    assert "speculators" in row(r, "tokenspeed", "0.1.1")["fails"]
    assert exit_code(r) == 1


def test_item12_use_aux_hidden_state_false_is_an_error():
    # sglang spec_aux_hidden_state.py @ 0.5.23 and vllm llama_eagle3.py 180-183 @ 0.34.0 read it from eagle_config
    cfg = {"eagle_aux_hidden_state_layer_ids": [2, 16, 29], **NESTED([1, 15, 28], use_aux_hidden_state=False)}
    r = check(cfg, data(32, [2, 16, 29]), "LlamaForCausalLM")
    assert "serving_no_aux" in codes(r, "error") and exit_code(r) == 1
    assert not row(r, "sglang", "0.5.23")["matches"]


# ------------------------------------------------------------------ fixes that cannot be wrong


ARCHS = ("LlamaForCausalLM", "Qwen2ForCausalLM", "DeepseekV3ForCausalLM", "MistralLarge3ForCausalLM",
         "GptOssForCausalLM", "Gemma3ForCausalLM", "Qwen3MoeForCausalLM", "KimiK3ForConditionalGeneration",
         "Qwen3ForCausalLM")
CASES = [(L, arch, bounds) for L, arch in itertools.product((28, 32, 36, 61, 80), ARCHS)
         for bounds in ([2, L // 2, L - 3], [1, L // 2 - 1, L - 4], [3, L // 2 + 1, L - 2], [2, L // 2, L],
                        [1, L // 2, L - 1])]


def _applied(config, fix):
    """The drafter config with the fix's config.json lines written into it."""
    fixed = dict(config)
    for line in fix["lines"]:
        if line.startswith('config.json: "eagle_aux_hidden_state_layer_ids"'):
            fixed["eagle_aux_hidden_state_layer_ids"] = json.loads(line.split(": ", 2)[2].split("  ")[0])
        elif line.startswith('config.json: "eagle_config"'):
            fixed["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": json.loads(line.rsplit(": ", 1)[1].rstrip("}"))}
    return fixed


def test_every_fix_shown_is_checked_through_every_current_rule():
    """225 pairings (5 depths, 9 architectures of 7 model families, 5 boundary sets, a drafter
    naming no ids): the fix's config.json lines, written into the config, make every engine its
    message names capture the data (0 claimed wrongly), and raise no other warning (0 false alarms);
    an engine no ids can help is named as such, not claimed."""
    claimed_wrong, alarms, fixed_pairs = [], [], 0
    for L, arch, bounds in CASES:
        r = check({}, data(L, bounds), arch)
        fixed = _applied({}, r["fix"])
        if fixed == {}:
            continue
        fixed_pairs += 1
        claimed = r["fix"]["message"].split(" capture b")[0].split("make")[-1]
        after = check(fixed, data(L, bounds), arch)
        for e in after["engines"]:
            if e["until"] is None and NAMES[e["engine"]] in claimed and e["engine"] != "trtllm" and not e["matches"]:
                claimed_wrong.append((L, arch, bounds, e["engine"]))
        alarms += [(L, arch, f["code"]) for f in after["findings"] if f["severity"] != "info"
                   and f["code"] not in ("serving_mismatch", "serving_fails", "serving_guessed")]
    assert fixed_pairs > 200 and claimed_wrong == [] and alarms == []


def test_a_fix_without_the_architecture_says_so():
    r = check({"eagle_aux_hidden_state_layer_ids": [0, 1, 2]}, data(61, [3, 31, 59]), None)
    assert "checked without the target's architecture" in r["fix"]["message"]
    # eagle_config [2, 30, 58]: b = id + 1 on a Llama, b = id under DeepSeek's first-id rule
    assert "on DeepseekV3ForCausalLM" in r["fix"]["message"]
    same = check({"eagle_aux_hidden_state_layer_ids": [0, 1, 2]}, data(61, [2, 30, 58]), None)
    # first id 1: + 1 under DeepSeek's rule too; only tokenspeed's Kimi K3 takes the ids unchanged
    assert "on KimiK3ForConditionalGeneration the engines" in same["fix"]["message"]
    assert "DeepseekV3ForCausalLM" not in same["fix"]["message"]


def test_the_text_keeps_the_json_order_with_question_marks():
    r = check(NESTED([1, 4, 1e30]), data(10, [2, 5, 7]), "LlamaForCausalLM")
    assert row(r, "sglang", "0.5.12")["boundaries"] == [2, 5, None]
    line = next(ln for ln in format_check(r).splitlines() if label(row(r, "sglang", "0.5.12")) + " " in ln
                and not ln.startswith(" "))
    assert "b 2, 5, ?" in line


def test_item10_vllm_sizes_a_qwen3_drafter_from_the_top_level_ids():
    # vllm 0.34.0 registry.py 737 and qwen3_eagle3.py 201-213: Eagle3Qwen3ForCausalLM counts the
    # top-level ids first; the Llama class (llama_eagle3.py 209-216) counts eagle_config's only
    two_top = {"eagle_aux_hidden_state_layer_ids": [2, 16]}
    assert vllm({**two_top, "architectures": ["Eagle3Qwen3ForCausalLM"]}, 32, None)["fc_states"] == 2
    assert vllm({**two_top, "architectures": ["LlamaForCausalLMEagle3"]}, 32, None)["fc_states"] == 3


def test_the_json_keys_are_their_typed_dicts():
    from eagle3_tui.dataset.serving import EngineCapture, ServingData

    r = check(NESTED([1, 15, 28], norm_before_fc=True), data(32, [29, 2, 16]), "DeepseekV3ForCausalLM")
    allowed = EngineCapture.__required_keys__ | EngineCapture.__optional_keys__
    assert all(set(e) <= allowed for e in r["engines"])
    assert set(r["data"]) <= ServingData.__required_keys__ | ServingData.__optional_keys__


def test_nan_and_infinity_ids_are_bad_ids_not_a_crash():
    # json.loads accepts NaN and Infinity; `NaN + 1` never equals a layer index
    r = check(json.loads('{"eagle_config": {"eagle_aux_hidden_state_layer_ids": [NaN, 15, Infinity]}}'),
              data(32, [2, 16, 29]), "LlamaForCausalLM")
    assert exit_code(r) == 1 and "serving_bad_ids" in codes(r, "error")
    assert row(r, "sglang", "0.5.12")["boundaries"] == [None, 16, None]
