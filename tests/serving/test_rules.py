"""Each engine's reading of a drafter config, one test per rule naming the code it was read from
(docs/serving.md has the full citations), and the public cases of issue 33 with configs shaped
like those drafters."""

from __future__ import annotations

from eagle3_tui.dataset.serving import check, exit_code, format_check
from eagle3_tui.dataset.serving.table import rule_at
from eagle3_tui.dataset.serving.versions import within

NESTED = lambda ids: {"eagle_config": {"eagle_aux_hidden_state_layer_ids": ids}}  # noqa: E731
vllm_before, vllm = rule_at("vllm", "0.11.0"), rule_at("vllm", "0.34.0")
sglang_before, sglang_first_id, sglang = rule_at("sglang", "0.5.12"), rule_at("sglang", "0.5.13"), rule_at("sglang", "0.5.23")
tokenspeed_526, tokenspeed = rule_at("tokenspeed", "0.1.0"), rule_at("tokenspeed", "0.1.1")
trtllm, specforge = rule_at("trtllm"), rule_at("specforge")


def at(result, engine, version=None, variant=None):
    """The row of an engine whose range holds `version` (rows merge the ranges that read alike)."""
    rows = [e for e in result["engines"] if e["engine"] == engine and (variant is None or e["variant"] == variant)
            and (version is None or within(version, e["since"], e["until"]))]
    assert len(rows) == 1, rows
    return rows[0]


def codes(result, severity="warning"):
    return [f["code"] for f in result["findings"] if f["severity"] == severity]


# ------------------------------------------------------------------ one test per rule and source


def test_vllm_0_11_0_gpu_model_runner_always_takes_its_default():
    # vllm 0.11.0 vllm/v1/worker/gpu_model_runner.py: set_aux_hidden_state_layers(get_eagle3_aux_hidden_state_layers())
    r = vllm_before({"eagle_aux_hidden_state_layer_ids": [1, 14, 26]}, 32, "LlamaForCausalLM")
    assert r["boundaries"] == [2, 16, 29] and r["guessed"]


def test_vllm_0_34_eagle3_utils_reads_the_top_level_ids_as_boundaries():
    # vllm 0.34.0 vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py get_eagle3_aux_layers_from_config;
    # interfaces.py EagleModelMixin captures after layer idx under index idx + 1: id = b, id L before the norm
    r = vllm({"eagle_aux_hidden_state_layer_ids": [1, 14, 32]}, 32, None)
    assert r["boundaries"] == [1, 14, 32] and not r["guessed"]
    nested_only = vllm(NESTED([1, 14, 26]), 32, None)  # eagle_config.* is not read for the capture
    assert nested_only["guessed"] and nested_only["boundaries"] == [2, 16, 29]
    assert "reads only the top-level" in nested_only["why"]


def test_sglang_0_5_12_llama_adds_one_to_every_explicit_id():
    # sglang 0.5.12 python/sglang/srt/models/llama.py and deepseek_v2.py: [val + 1 for val in layer_ids]
    assert sglang_before(NESTED([2, 30, 58]), 61, "DeepseekV3ForCausalLM")["boundaries"] == [3, 31, 59]
    top_only = sglang_before({"eagle_aux_hidden_state_layer_ids": [1, 14, 26]}, 32, "LlamaForCausalLM")
    assert top_only["guessed"] and top_only["boundaries"] == [2, 16, 29]  # model_runner reads eagle_config only


def test_sglang_0_5_13_deepseek_v2_first_id_rule_and_llama_unchanged():
    # sglang 0.5.13 python/sglang/srt/models/deepseek_v2.py (PR 25454): +1 only when layer_ids[0] == 1
    assert sglang_first_id(NESTED([2, 30, 58]), 61, "DeepseekV3ForCausalLM")["boundaries"] == [2, 30, 58]
    assert sglang_first_id(NESTED([1, 29, 57]), 61, "DeepseekV3ForCausalLM")["boundaries"] == [2, 30, 58]
    # sglang 0.5.23 python/sglang/srt/models/llama.py still adds 1 whatever the first id
    assert sglang_first_id(NESTED([2, 30, 58]), 61, "LlamaForCausalLM")["boundaries"] == [3, 31, 59]


def test_sglang_0_5_23_gpt_oss_keeps_ids_that_reach_the_last_boundary():
    # sglang 0.5.23 python/sglang/srt/models/gpt_oss.py (PR 32334, in 0.5.17): max(layer_ids) == num_layers
    assert sglang(NESTED([24, 30, 36]), 36, "GptOssForCausalLM")["boundaries"] == [24, 30, 36]
    assert sglang(NESTED([1, 17, 32]), 36, "GptOssForCausalLM")["boundaries"] == [2, 18, 33]
    assert sglang_first_id(NESTED([24, 30, 36]), 36, "GptOssForCausalLM")["boundaries"] == [25, 31, None]


def test_trtllm_eagle3_metadata_default_ignores_the_drafter_config():
    # tensorrt_llm/_torch/speculative/eagle3.py @ 001e6700: layers_to_capture (1, L//2-1, L-4), captured
    # after layer id (maybe_capture_hidden_states(self.layer_idx, ...)): b = id + 1
    r = trtllm({"eagle_aux_hidden_state_layer_ids": [5, 6, 7]}, 80, None)
    assert r["boundaries"] == [2, 40, 77] and r["guessed"]


def test_tokenspeed_0_1_0_reads_the_ids_pr_526():
    # no release ignores the ids: 0.1.0, the first, has PR 526 (model_executor.py 104-113 @ 0.1.0);
    # the code before it (causal_lm.py @ 39137672^, [2, L//2, L-3]) was never released, so no row
    # names it any more
    # model_executor.py _eagle_aux_layer_ids @ 0.1.0 (PR 526): id + 1, id L = the residual before the norm
    assert tokenspeed_526(NESTED([24, 30, 36]), 36, None)["boundaries"] == [25, 31, 36]
    assert tokenspeed_526({"eagle_aux_hidden_state_layer_ids": [1, 17, 32]}, 36, None)["boundaries"] == [2, 18, 33]
    # an eagle_config without the key hides the top-level one (ids = eagle_config.get(...))
    hidden = {"eagle_config": {"use_aux_hidden_state": True}, "eagle_aux_hidden_state_layer_ids": [1, 17, 32]}
    assert tokenspeed_526(hidden, 36, None)["guessed"]


def test_tokenspeed_pr_958_also_reads_text_config():
    # factory.py 47-78 @ 0.1.1 (PR 958): the same, in text_config too; model_executor.py 104-113 @ 0.1.0 does not
    config = {"text_config": NESTED([1, 45, 89])}
    assert tokenspeed_526(config, 93, None)["guessed"]
    assert tokenspeed(config, 93, None)["boundaries"] == [2, 46, 90]


def test_specforge_resolve_eagle_capture_layers():
    # specforge/algorithms/model_providers.py resolve_eagle_capture_layers @ a6b6b023: eagle_config ids,
    # else [1, L//2-1, L-4]; eagle3_target_model.py @ 507da3e5 hooks layers[id]'s output: b = id + 1
    assert specforge(NESTED([1, 14, 26]), 32, None)["boundaries"] == [2, 15, 27]
    default = specforge({"eagle_aux_hidden_state_layer_ids": [2, 16, 29]}, 32, None)
    assert default["guessed"] and default["boundaries"] == [2, 16, 29]


# ------------------------------------------------------------------ the public cases


def test_pr_50170_70b_config_without_ids_is_a_guess_on_every_engine():
    """nvidia/Llama-3.3-70B-Instruct-Eagle3: no ids; vLLM guesses (2, 40, 77). Trained elsewhere
    (here b 2, 41, 78), every engine misses; trained there, every guess is still a warning."""
    config = {"architectures": ["LlamaForCausalLMEagle3"], "num_hidden_layers": 1, "eagle_config": {}}
    elsewhere = check(config, {"layers": 80, "boundaries": [2, 41, 78], "groups": []}, "LlamaForCausalLM")
    v = at(elsewhere, "vllm", "0.34.0")
    assert v["boundaries"] == [2, 40, 77] and not v["matches"] and v["guessed"]
    text = " ".join(format_check(elsewhere).split())
    assert "vLLM 0.22.0 ≤ v, V2 runner will capture b 2, 40, 77; the data holds b 2, 41, 78" in text
    assert exit_code(elsewhere) == 1
    fix = elsewhere["fix"]
    assert 'config.json: "eagle_aux_hidden_state_layer_ids": [2, 41, 78]  (top level)' in fix["lines"]
    assert 'config.json: "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 40, 77]}' in fix["lines"]
    assert "no single line can" in fix["message"]
    there = check(config, {"layers": 80, "boundaries": [2, 40, 77], "groups": []}, "LlamaForCausalLM")
    assert exit_code(there) == 0
    assert "serving_guessed" in codes(there)  # a guess that matches today is still a warning
    assert all(e["matches"] for e in there["engines"])


def test_pr_25454_kimi_first_id_two():
    """lightseekorg/kimi-k2.5-eagle3-mla: ids [2, 30, 58] mean "input of"; SGLang before 0.5.13 added
    1 to them; since, DeepSeek-family models take them as they are."""
    r = check(NESTED([2, 30, 58]), {"layers": 61, "boundaries": [2, 30, 58], "groups": []},
              "KimiK25ForConditionalGeneration")
    # kimi_k25.py 841 @ 0.5.10: Kimi K2.5's first release with set_eagle3_layers_to_capture
    old = at(r, "sglang", "0.5.12")
    assert old["boundaries"] == [3, 31, 59] and not old["matches"] and old["since"] == "0.5.11"
    # 0.5.10: the CUDA graphs are recorded with the default ids before the drafter's are set
    # (cuda_graph_runner.py 648, model_runner.py 668 @ 0.5.10.post1)
    assert at(r, "sglang", "0.5.10")["graph_states"] == [2, 30, 58]
    assert at(r, "sglang", "0.5.23")["matches"]
    assert "has no set_eagle3_layers_to_capture" in at(r, "sglang", "0.5.9")["fails"]
    text = " ".join(format_check(r).split())
    assert ("SGLang 0.5.11 ≤ v < 0.5.13 would capture b 3, 31, 59; the data holds b 2, 30, 58: every slot 1 "
            "boundary deeper") in text
    # tokenspeed (every release) still adds 1: the rule in force misses
    assert "tokenspeed 0.1.1 ≤ v will capture b 3, 31, 59" in text
    assert exit_code(r) == 1


def test_pr_526_and_32334_gpt_oss_v3_with_norm_before_fc():
    config = {"eagle_config": {"eagle_aux_hidden_state_layer_ids": [24, 30, 36], "norm_before_fc": True}}
    r = check(config, {"layers": 36, "boundaries": [24, 30, 36], "groups": []}, "GptOssForCausalLM")
    assert at(r, "tokenspeed", "0.1.0")["boundaries"] == [25, 31, 36]  # PR 526 is in 0.1.0, the first release
    assert at(r, "sglang", "0.5.23")["matches"]
    assert at(r, "sglang", "0.5.13")["boundaries"] == [25, 31, None]  # two states: the crash of #32226
    assert "serving_norm_before_fc" in codes(r)
    assert "no config.json ids" in r["fix"]["message"]


def test_final_post_norm_state_and_slot_count_are_said_plainly():
    r = check(NESTED([1, 17]), {"layers": 36, "boundaries": [2, 18, 37], "groups": []}, "GptOssForCausalLM")
    assert "serving_post_norm" in codes(r) and "serving_slot_count" in codes(r)
    assert "final post-norm state" in format_check(r)


def test_correct_pairing_stays_silent():
    """Both keys set (vLLM reads the top level, SGLang/tokenspeed/SpecForge eagle_config): no
    warning, exit 0; TensorRT-LLM's own option is an info note only."""
    config = {"eagle_aux_hidden_state_layer_ids": [2, 16, 29], **NESTED([1, 15, 28])}
    r = check(config, {"layers": 32, "boundaries": [2, 16, 29], "groups": []}, "LlamaForCausalLM")
    assert codes(r) == [] and exit_code(r) == 0
    assert r["fix"] is None


def test_minority_group_is_named():
    data = {"layers": 32, "boundaries": [2, 16, 29],
            "groups": [{"label": "files 12..23", "files": 12, "boundaries": [1, 15, 28]}]}
    r = check({"eagle_aux_hidden_state_layer_ids": [2, 16, 29], **NESTED([1, 15, 28])}, data, "LlamaForCausalLM")
    assert codes(r) == ["serving_minority"]
    assert "files 12..23 (12 files) holds b 1, 15, 28" in format_check(r)
