"""Issue 56, items 3-5: a second read of the released wheels (vLLM 0.10.2-0.34.0, SGLang 0.4.8-0.5.23,
tokenspeed 0.1.0-0.1.1) found the table wrong on 74 rows from 14 causes. One test per cause, each
naming the file, lines and release it was read from (docs/serving.md has the same citations).

Where the issue and the wheels disagree, the test follows the wheels and says so."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from eagle3_tui.dataset.serving import check, exit_code, format_check, table_rows
from eagle3_tui.dataset.serving.table import rule_at
from eagle3_tui.dataset.serving.versions import asked_engines, key, label, parse_engine, within

NESTED = lambda ids, **more: {"eagle_config": {"eagle_aux_hidden_state_layer_ids": ids, **more}}  # noqa: E731
TOP = lambda ids: {"eagle_aux_hidden_state_layer_ids": ids}  # noqa: E731
BOTH = {**TOP([2, 16, 29]), **NESTED([1, 15, 28])}  # each engine's key, each as it reads it


def data(L, bounds):
    return {"layers": L, "boundaries": bounds, "groups": []}


def row(result, engine, version=None, variant=None):
    rows = [e for e in result["engines"] if e["engine"] == engine and (variant is None or e["variant"] == variant)
            and (version is None or within(version, e["since"], e["until"]))]
    assert len(rows) == 1, rows
    return rows[0]


def codes(result, severity=None):
    return [f["code"] for f in result["findings"] if severity is None or f["severity"] == severity]


# ------------------------------------------------------------------ start-up failures shown as captures


@pytest.mark.parametrize("arch", ["Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"])
def test_gemma3_fails_at_start_up_on_every_vllm_release(arch):
    """gemma3.py 367 and gemma3_mm.py 501-503 @ 0.34.0 (481 and 463 @ 0.10.2): no SupportsEagle3 in any
    release read, so "Model does not support EAGLE3 interface" (eagle3_utils.py 18-19 @ 0.34.0,
    gpu_model_runner.py 2383-2389 @ 0.10.2); before 0.17.0 the speculative config refuses the model
    type first (speculative.py 689-709 @ 0.16.0)."""
    for config in (BOTH, {}, TOP([1, 15, 31])):
        r = check(config, data(32, [2, 16, 29]), arch)
        vllm = [e for e in r["engines"] if e["engine"] == "vllm"]
        assert vllm and all(e["fails_at"] == "start-up" and "SupportsEagle3" in e["fails"] for e in vllm)
        assert all(e["states"] == [] and not any(e["boundaries"]) for e in vllm)
        text = format_check(r)
        assert "fails at start-up: " + arch in " ".join(text.split())
        assert all(got == "nothing" for _, name, got, _ in table_rows(r) if name.startswith("vLLM"))


def test_qwen3_moe_on_vllm_before_0_11_1_fails_at_start_up():
    # qwen3_moe.py 571-572 @ 0.11.0: SupportsPP, SupportsLoRA, MixtureOfExperts (no SupportsEagle3);
    # 629-631 @ 0.11.1: SupportsEagle3
    assert rule_at("vllm", "0.11.0")(BOTH, 32, "Qwen3MoeForCausalLM")["fails_at"] == "start-up"
    assert rule_at("vllm", "0.11.1")(BOTH, 32, "Qwen3MoeForCausalLM")["states"] == [2, 16, 29]
    # deepseek_v2.py 1263-1265 @ 0.17.1 (SupportsEagle, EAGLE-1 only), 1297-1304 @ 0.18.0 (SupportsEagle3)
    assert "SupportsEagle3 before 0.18.0" in rule_at("vllm", "0.17.1")(BOTH, 32, "DeepseekV3ForCausalLM")["fails"]


def test_tokenspeed_has_no_gemma3_and_its_qwen3_moe_feeds_no_aux_states():
    """registry.py 57-60 @ 0.1.1: no Gemma 3 model class in either release; qwen3_moe.py 196 @ 0.1.0 and
    195 @ 0.1.1: Qwen3MoeModel.forward returns (hidden_states, None). The issue called the latter a
    start-up failure: the wheel runs it, the drafter fed the last hidden state with its fc skipped
    (llama_eagle3.py 489 @ 0.1.1), so the row says it captures nothing, not that it fails."""
    r = check(BOTH, data(32, [2, 16, 29]), "Gemma3ForCausalLM")
    ts = row(r, "tokenspeed", "0.1.1")
    assert ts["fails_at"] == "start-up" and "no model class" in ts["fails"] and ts["states"] == []
    r = check(BOTH, data(32, [2, 16, 29]), "Qwen3MoeForCausalLM")
    for version in ("0.1.0", "0.1.1"):
        ts = row(r, "tokenspeed", version)
        assert ts["states"] == [] and not ts["matches"] and "returns no aux states" in ts["why"]
    assert "tokenspeed 0.1.1 ≤ v will capture nothing" in " ".join(format_check(r).split())
    assert "b ;" not in format_check(r)  # it printed "would capture b ;"


@pytest.mark.parametrize("arch", ["Qwen3ForCausalLM", "Qwen3MoeForCausalLM"])
def test_sglang_qwen3_fails_through_0_4_8_post1(arch):
    # model_runner.py 307 @ 0.4.8.post1 calls set_eagle3_layers_to_capture(), which qwen3.py and
    # qwen3_moe.py have only from 0.4.9 (qwen3.py 461-474, qwen3_moe.py 759-772 @ 0.4.9): AttributeError
    old = rule_at("sglang", "0.4.8.post1")(NESTED([1, 15, 28]), 32, arch)
    assert old["fails_at"] == "start-up" and "before 0.4.9" in old["fails"] and old["states"] == []
    assert rule_at("sglang", "0.4.9")(NESTED([1, 15, 28]), 32, arch)["states"] == [2, 16, 29]
    assert rule_at("sglang", "0.4.8.post1")(NESTED([1, 15, 28]), 32, "LlamaForCausalLM")["guessed"]


def test_sglang_gemma3_fails_before_0_5_12_and_captures_id_L_minus_1_from_it():
    """gemma3_causal.py 897-906 and 660-663 @ 0.5.12 (the hook, and `num_layers in layers_to_capture`
    after the last layer), gemma3_mm.py 497-499: the issue had the capture from 0.5.17."""
    for arch in ("Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"):
        before = rule_at("sglang", "0.5.11")(NESTED([1, 15, 31]), 32, arch)
        assert before["fails_at"] == "start-up" and "before 0.5.12" in before["fails"]
        now = rule_at("sglang", "0.5.12")(NESTED([1, 15, 31]), 32, arch)
        assert now["boundaries"] == [2, 16, 32] and not now["fails"]


def test_an_fc_built_for_another_count_fails_at_start_up_and_captures_nothing():
    """The drafter's fc weight (trained on the data's 3 slots) against the fc the engine builds from
    the ids: llama_eagle3.py 154-160 @ sglang 0.5.12 and 179-190 @ vllm 0.22.0 count eagle_config's
    ids; before them a fixed 3 (llama_eagle3.py 124-127 @ sglang 0.4.9, 176-186 @ vllm 0.21.0)."""
    for ids in ([1, 15], [1, 8, 15, 28]):
        r = check(NESTED(ids), data(32, [2, 16, 29]), "LlamaForCausalLM")
        now = row(r, "sglang", "0.5.23")
        assert now["fails_at"] == "start-up" and "fc for" in now["fails"] and now["boundaries"] == [None] * len(ids)
        assert row(r, "sglang", "0.5.12")["fails_at"] == "start-up"
        old = row(r, "sglang", "0.5.11")  # fc for 3: the states do not fit it at the first forward
        assert old["fails_at"] == "first forward" and "fc takes 3 states" in old["fails"]
        got = next(g for _, name, g, _ in table_rows(r) if name == label(now))
        assert got == "nothing"


def test_an_id_past_the_last_layer_fails_at_start_up_on_sglang_qwen_moe_from_0_5_4_post2():
    """qwen2_moe.py 562-565 @ 0.5.4.post2: setattr(self.layers[id + 1], ...) at start-up, an IndexError
    for id ≥ L - 1 (the issue had it from 0.5.17); 0.5.4.post1 kept a list (qwen3_moe.py, qwen2_moe.py
    `i in self.layers_to_capture`), so id L - 1 just captured nothing."""
    ids = NESTED([1, 15, 31])
    new = rule_at("sglang", "0.5.4.post2")(ids, 32, "Qwen3MoeForCausalLM")
    assert new["fails_at"] == "start-up" and "IndexError" in new["fails"] and new["boundaries"] == [None] * 3
    old = rule_at("sglang", "0.5.4.post1")(ids, 32, "Qwen3MoeForCausalLM")
    assert old["boundaries"] == [2, 16, None] and old["fails_at"] == "first forward"  # 2 states, fc for 3
    # qwen3_next.py 849-852 @ 0.5.9: Qwen3-Next flags its layers from its first hook
    assert "IndexError" in rule_at("sglang", "0.5.9")(ids, 32, "Qwen3NextForCausalLM")["fails"]


# ------------------------------------------------------------------ state the table cannot see


def test_sglang_before_0_5_11_replays_the_default_layers_from_its_cuda_graphs():
    """cuda_graph_runner.py 297-298 and model_runner.py 314 (init_cuda_graphs) before 341 (the drafter's
    ids) @ 0.4.9; the same order to 0.5.10.post1 (cuda_graph_runner.py 648, model_runner.py 668);
    model_runner.py 764 and 814-822 @ 0.5.11 set the drafter's ids before the graphs."""
    config = NESTED([0, 14, 27])  # b 1, 15, 28: not the default b 2, 16, 29
    r = check(config, data(32, [1, 15, 28]), "LlamaForCausalLM")
    old = row(r, "sglang", "0.5.10")
    assert old["graph_states"] == [2, 16, 29] and old["states"] == [1, 15, 28] and not old["matches"]
    assert "CUDA graphs" in old["depends"] and "--disable-cuda-graph" in old["depends"]
    graph = next(f for f in r["findings"] if f["code"] == "serving_cuda_graph")
    assert graph["severity"] == "info"  # an old range: not in force
    assert "b 2, 16, 29" in graph["message"] and "b 1, 15, 28" in graph["message"]
    assert "--disable-cuda-graph" in graph["message"] and "CUDA graphs on" in graph["message"]
    assert not row(r, "sglang", "0.5.11")["graph_states"] and row(r, "sglang", "0.5.11")["matches"]
    asked = check(config, data(32, [1, 15, 28]), "LlamaForCausalLM", {"sglang": "0.5.10"})
    assert "serving_cuda_graph" in codes(asked, "warning") and exit_code(asked) == 1
    assert "(graphs: b 2, 16, 29)" in table_rows(asked)[0][2]


def test_sglang_qwen_moe_keeps_the_graphs_flags_set_so_its_prefill_captures_both_sets():
    # qwen2_moe.py 562-565 @ 0.5.4.post2: set_eagle3_layers_to_capture only sets flags, never clears the
    # default ids' (set first, for the CUDA graphs): 6 states for an fc of 3
    r = rule_at("sglang", "0.5.10")(NESTED([0, 14, 27]), 32, "Qwen3MoeForCausalLM")
    assert r["fails_at"] == "first forward" and "the prefill captures 6" in r["fails"]


# ------------------------------------------------------------------ boundaries a few releases off


def test_sglang_llama_id_minus_1_fails_until_0_5_22():
    # llama.py 331-332 @ 0.4.9 .. 440-441 @ 0.5.21: hidden_states + residual before layer 0, residual None;
    # llama.py 478-487 and layer_boundary/stage.py 354-367 @ 0.5.22: the embedding is captured (b 0)
    ids = NESTED([-1, 15, 28])
    assert rule_at("sglang", "0.5.21")(ids, 32, "LlamaForCausalLM")["fails_at"] == "first forward"
    assert rule_at("sglang", "0.5.22")(ids, 32, "LlamaForCausalLM")["states"] == [0, 16, 29]
    # qwen2.py 329-331 @ 0.4.9 (Qwen3's model) adds the residual only when there is one
    assert rule_at("sglang", "0.5.21")(ids, 32, "Qwen3ForCausalLM")["states"] == [0, 16, 29]


def test_sglang_reads_use_aux_hidden_state_from_0_5_8():
    # model_runner.py 320-344 @ 0.5.8: eagle_config.get("use_aux_hidden_state", True); 0.5.7 never reads it
    config = NESTED([1, 15, 28], use_aux_hidden_state=False)
    assert rule_at("sglang", "0.5.7")(config, 32, "LlamaForCausalLM")["states"] == [2, 16, 29]
    assert rule_at("sglang", "0.5.8")(config, 32, "LlamaForCausalLM")["states"] == []
    # vLLM's drafter reads it from 0.12.0 (llama_eagle3.py 145-149 @ 0.12.0)
    assert rule_at("vllm", "0.11.2")(TOP([2, 16, 29]) | config, 32, "LlamaForCausalLM")["states"] == [2, 16, 29]
    assert rule_at("vllm", "0.12.0")(TOP([2, 16, 29]) | config, 32, "LlamaForCausalLM")["states"] == []


def test_vllm_dedupes_from_0_30_0_and_reads_dspark_ids_from_0_25_0():
    """The issue said 0.33.0 already dedups and reads the dspark ids: the wheels have both earlier.
    interfaces.py 1577-1578 @ 0.30.0: tuple(sorted(set(layers))) (absent @ 0.29.0); eagle3_utils.py
    47-55 @ 0.25.0 (V2): dspark_target_layer_ids + 1, target_layer_ids + 1; 112-122 @ 0.30.0: as they
    are for model_type deepseek_v41."""
    mixed = TOP(["2", 16, 29])
    assert "TypeError" in rule_at("vllm", "0.30.0", "V2 runner")(mixed, 32, None)["fails"]
    assert rule_at("vllm", "0.29.0", "V2 runner")(mixed, 32, None)["boundaries"] == [None, 16, 29]
    dspark = {"dspark_target_layer_ids": [1, 15, 28]}
    assert rule_at("vllm", "0.25.0", "V2 runner")(dspark, 32, None)["boundaries"] == [2, 16, 29]
    assert rule_at("vllm", "0.24.0", "V2 runner")(dspark, 32, None)["guessed"]
    v41 = {"dspark_target_layer_ids": [2, 16, 29], "model_type": "deepseek_v41"}
    assert rule_at("vllm", "0.29.0", "V2 runner")(v41, 32, None)["boundaries"] == [3, 17, 30]
    assert rule_at("vllm", "0.30.0", "V2 runner")(v41, 32, None)["boundaries"] == [2, 16, 29]


def test_vllm_deepseek_captures_id_L_from_0_25_0():
    # deepseek_v2.py 1489-1490 @ 0.25.0: `if self.end_layer in self.aux_hidden_state_layers` (absent @ 0.24.0)
    top = TOP([2, 16, 32])
    assert rule_at("vllm", "0.24.0", "V2 runner")(top, 32, "DeepseekV3ForCausalLM")["boundaries"] == [2, 16, None]
    assert rule_at("vllm", "0.25.0", "V2 runner")(top, 32, "DeepseekV3ForCausalLM")["boundaries"] == [2, 16, 32]


def test_sglang_first_id_rule_covers_the_deepseek_subclasses_from_0_5_13():
    # mistral_large_3.py 12 and glm4_moe.py 1481 @ 0.5.13: subclasses of DeepseekV3/V2ForCausalLM, so
    # deepseek_v2.py 2752-2755's rule is theirs from 0.5.13 (the table had 0.5.17)
    for arch in ("MistralLarge3ForCausalLM", "GlmMoeDsaForCausalLM"):
        assert rule_at("sglang", "0.5.13")(NESTED([2, 30, 58]), 61, arch)["boundaries"] == [2, 30, 58]
        assert rule_at("sglang", "0.5.12")(NESTED([2, 30, 58]), 61, arch)["boundaries"] == [3, 31, 59]


def test_tokenspeed_rows_are_its_releases():
    """model_executor.py 104-113 @ 0.1.0 (PR 526: the ids read, the top level or eagle_config's);
    factory.py 47-78 and 193-200 @ 0.1.1 (PR 958: text_config, and the server flag applied: 0.1.0
    parses --eagle3-layers-to-capture, server_args.py 592-594, and never uses it); qwen3_5.py
    1021-1026 @ 0.1.0 captures before the layer only, as at 0.1.1."""
    r = check(BOTH, data(32, [2, 16, 29]), "LlamaForCausalLM")
    names = [label(e) for e in r["engines"] if e["engine"] == "tokenspeed"]
    assert names == ["tokenspeed 0.1.0 ≤ v < 0.1.1", "tokenspeed 0.1.1 ≤ v"]
    assert not row(r, "tokenspeed", "0.1.0")["depends"] and "--eagle3-layers-to-capture" in row(
        r, "tokenspeed", "0.1.1")["depends"]
    assert rule_at("tokenspeed", "0.1.0")(TOP([1, 15, 32]), 32, "Qwen3_5MoeForCausalLM")["boundaries"] == [2, 16, None]


# ------------------------------------------------------------------ the fix and the verdict agree


def test_use_aux_hidden_state_false_fix_turns_it_on_first():
    """The error says vLLM and SGLang feed no aux states; the fix used to claim ids alone "make vLLM
    capture" them."""
    config = {**TOP([2, 16, 29]), **NESTED([1, 15, 28], use_aux_hidden_state=False)}
    r = check(config, data(32, [2, 16, 29]), "LlamaForCausalLM")
    assert "serving_no_aux" in codes(r, "error") and exit_code(r) == 1
    assert row(r, "vllm", "0.34.0")["states"] == [] and row(r, "sglang", "0.5.23")["states"] == []
    assert r["fix"]["lines"][0].startswith('config.json: "eagle_config": {"use_aux_hidden_state": true}')
    assert r["fix"]["message"].startswith("with use_aux_hidden_state true, ")
    fixed = {**TOP([2, 16, 29]), **NESTED([1, 15, 28])}
    assert exit_code(check(fixed, data(32, [2, 16, 29]), "LlamaForCausalLM")) == 0


def test_no_fix_line_when_nothing_is_to_fix_and_a_guess_is_said_in_the_verdict():
    right = check(BOTH, data(32, [2, 16, 29]), "LlamaForCausalLM")
    text = format_check(right)
    assert right["fix"] is None and "fix:" not in text and text.splitlines()[0].endswith("nothing to fix")
    # the demo's drafter: eagle_config's ids only; vLLM's default happens to match
    demo = check(NESTED([1, 4, 6]), data(10, [2, 5, 7]), "LlamaForCausalLM")
    first = " ".join(format_check(demo).split("\n\n")[0].split())
    assert exit_code(demo) == 0 and "serving_guessed" in codes(demo, "warning")
    assert "only by its default" in first and "vLLM 0.22.0 ≤ v, V2 runner" in first and "fix: " in first


# ------------------------------------------------------------------ the version asked, the releases read


def test_engine_names_a_release_and_later_ones_are_said_unread():
    assert parse_engine("vllm==0.33.0") == ("vllm", "0.33.0") and parse_engine("SGLang==0.5.4.post2")[0] == "sglang"
    assert key("0.4.8") < key("0.4.8.post1") < key("0.4.9") < key("0.4.10")
    for bad in ("vllm=0.33", "vllm==0.33.0rc1", "llama.cpp==1"):
        with pytest.raises(ValueError):
            parse_engine(bad)
    with pytest.raises(ValueError, match="twice"):
        asked_engines(["vllm==0.33.0", "vllm==0.34.0"])
    r = check(TOP([2, 16, 32]), data(32, [2, 16, 32]), "LlamaForCausalLM", {"vllm": "0.17.0"})
    assert {e["engine"] for e in r["engines"]} == {"vllm"} and exit_code(r) == 1  # id L: nothing before 0.18.0
    assert exit_code(check(TOP([2, 16, 32]), data(32, [2, 16, 32]), "LlamaForCausalLM", {"vllm": "0.18.0"})) == 0
    both = check(TOP([2, 16, 29]), data(32, [2, 16, 29]), "LlamaForCausalLM", {"vllm": "0.33.0"})
    assert [e["variant"] for e in both["engines"]] == ["V1 runner", "V2 runner"]
    later = check(TOP([2, 16, 29]), data(32, [2, 16, 29]), "LlamaForCausalLM", {"vllm": "0.35.0"})
    e = later["engines"][0]
    assert (e["asked"], e["read_as"], e["until"]) == ("0.35.0", "0.34.0", None)
    text = " ".join(format_check(later).split())
    assert "vLLM 0.35.0: not read, the rules of 0.34.0 assumed" in text
    assert later["read"]["vllm"] == {"oldest": "0.10.2", "newest": "0.34.0"}
    assert later["read"]["sglang"]["newest"] == "0.5.23" and later["read"]["tokenspeed"]["newest"] == "0.1.1"
    assert "read:    vLLM 0.10.2 to 0.34.0, SGLang 0.4.8 to 0.5.23, tokenspeed 0.1.0 to 0.1.1" in format_check(later)


def test_the_text_fits_100_columns_and_says_ranges_half_open():
    config = NESTED([1, 15, 28], norm_before_fc=True)
    for arch in ("LlamaForCausalLM", "Gemma3ForCausalLM", "Qwen3MoeForCausalLM", "DeepseekV3ForCausalLM", None):
        text = format_check(check(config, data(32, [29, 2, 16]), arch))
        assert max(map(len, text.splitlines())) <= 100, arch
        assert "tokenspeed 0.1.0 ≤ v < 0.1.1" in text or "tokenspeed 0.1.0 ≤ v " in text
        assert " .. " not in text and "since 0." not in text and "through 0." not in text


# ------------------------------------------------------------------ the split


def test_the_serving_package_is_small_modules_of_short_functions():
    """Issue 56: dataset/serving.py and serving_rules.py were 1,140 lines together; now one module per
    engine and idea, none over 450 lines, no function over 80."""
    package = Path(__file__).resolve().parents[2] / "eagle3_tui" / "dataset" / "serving"
    for path in package.glob("*.py"):
        text = path.read_text()
        assert len(text.splitlines()) <= 450, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno - node.lineno + 1 <= 80, f"{path.name}: {node.name}"
    assert {"vllm.py", "sglang.py", "tokenspeed.py", "trtllm.py", "specforge.py"} <= {p.name for p in package.iterdir()}
