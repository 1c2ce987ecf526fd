"""identify on captures made by running the tiny Llama: every slot lands on the boundary it was
taken at, whatever the layout, and what is not a boundary of the model is said, not guessed."""

from __future__ import annotations

import threading

import pytest
import torch

from eagle3_tui.samples.identify import identify, identify_file
from eagle3_tui.samples.sample import Sample, Slot
from eagle3_tui.samples.stats import Cancelled
from tests.helpers.identify_world import DEFAULT, L


def codes(r: dict) -> dict[str, str]:
    return {f["code"]: f["severity"] for f in r["findings"]}


def test_specforge_bf16_capture_at_the_default_boundaries(world):
    r = identify_file(str(world.specforge("sf.ckpt")), str(world.model))
    assert "error" not in r, r
    assert [s["boundary"] for s in r["slots"]] == list(DEFAULT)
    assert all(s["status"] == "match" and s["cosine"] > 0.999 for s in r["slots"])
    assert r["final"]["norm"] == "post"
    conv = [f for f in r["findings"] if f["code"] == "layer_convention"]
    assert conv[0]["severity"] == "info" and conv[0]["follows"] == "output"
    assert conv[0]["ids"] == [1, L // 2 - 1, L - 4]  # SpecForge's default ids, read as output of layer
    assert not [f for f in r["findings"] if f["severity"] != "info"]
    assert r["layers"] == L and r["tokens"] == len(world.ids(0))


def test_embeddings_and_last_residual_pre_norm(world):
    """b = 0 (input of layer 0) and b = L (the final norm's input) are boundaries like the others;
    a pre-norm final state is told from the post-norm one."""
    r = identify_file(str(world.specforge("edges.ckpt", (0, L), final="pre")), str(world.model))
    assert [s["boundary"] for s in r["slots"]] == [0, L]
    assert r["final"]["norm"] == "pre" and r["final"]["cosine"] > 0.999
    # the file's schema says post-norm for SpecForge; the states say otherwise
    assert codes(r)["final_norm"] == "warning"


def test_a_file_without_a_final_state(world):
    r = identify_file(str(world.specforge("nofinal.ckpt", final=None)), str(world.model))
    assert r["final"] is None
    assert [s["boundary"] for s in r["slots"]] == list(DEFAULT)


def test_speculators_layout_and_padding_rows_left_out(world):
    r = identify_file(str(world.speculators("hs_0.safetensors")), str(world.model))
    assert r["schema"] == "speculators"
    assert [s["boundary"] for s in r["slots"]] == list(DEFAULT)
    assert r["final"]["norm"] == "pre"
    assert "final_norm" not in codes(r)  # the layout says pre-norm, and it is
    padded = identify_file(str(world.specforge("padded.ckpt", pad=7)), str(world.model))
    assert padded["tokens"] == len(world.ids(0))  # the random pad rows are not run or scored
    assert [s["boundary"] for s in padded["slots"]] == list(DEFAULT)


def test_float32_capture_against_a_bf16_model(world, tmp_path):
    """dtype comes from config.json: a bf16 checkpoint runs in bf16, and a float32 training dump
    still lands on its boundaries."""
    from tests.helpers.tiny_llama import make_llama

    bf16_model = make_llama(tmp_path / "bf16", dtype="bfloat16")
    path = world.specforge("f32.ckpt", dtype=torch.float32)
    r = identify_file(str(path), str(bf16_model))
    assert r["model_dtype"] == "bfloat16"
    assert [s["boundary"] for s in r["slots"]] == list(DEFAULT)
    assert r["final"]["norm"] == "post"


def test_one_deeper_capture_is_named(world):
    deeper = tuple(b + 1 for b in DEFAULT)
    r = identify_file(str(world.specforge("deeper.ckpt", deeper)), str(world.model))
    assert [s["boundary"] for s in r["slots"]] == list(deeper)
    conv = next(f for f in r["findings"] if f["code"] == "layer_convention")
    assert conv["severity"] == "warning"
    assert conv["follows"] == "output" and conv["ids"] == [2, L // 2, L - 3]  # vLLM's ids, output-of reading
    assert "vLLM default ids" in conv["message"] and "{2, 4, 5}" in conv["message"]


def test_runner_up_and_margin(world):
    r = identify_file(str(world.specforge("sf.ckpt")), str(world.model))
    for s in r["slots"]:
        assert s["second"]["boundary"] != s["boundary"]
        assert abs(s["second"]["boundary"] - s["boundary"]) == 1  # the neighbour is the runner-up
        assert s["margin"] == pytest.approx(s["cosine"] - s["second"]["cosine"])
        assert 0.05 < s["margin"] < 0.9


def _capture(world, parts, final=None, ids=True) -> Sample:
    return Sample(path="capture", schema="list of tensors", slots=[Slot(p, f"aux{i}") for i, p in enumerate(parts)],
                  final=Slot(final, "final") if final is not None else None,
                  ids=world.ids(0) if ids else None)


def test_scaled_noised_and_foreign_slots_say_so(world):
    bounds, _ = world.states(0)
    g = torch.Generator().manual_seed(5)
    x = bounds[4].float()
    noised = x + torch.randn(x.shape, generator=g) * x.norm(dim=-1, keepdim=True) / x.shape[1] ** 0.5 * 0.4
    other_prompt, _ = world.states(1)
    foreign = other_prompt[4][: x.shape[0]].float() if other_prompt[4].shape[0] >= x.shape[0] else None
    parts = [x * 3.0, noised, foreign if foreign is not None else torch.randn(x.shape, generator=g)]
    r = identify(_capture(world, parts), str(world.model))
    scaled, noisy, other = r["slots"]
    assert scaled["boundary"] == 4 and scaled["status"] == "scaled" and scaled["norm_ratio"] == pytest.approx(3, rel=0.01)
    assert noisy["boundary"] is None and noisy["status"] == "noisy" and noisy["nearest"] == 4
    assert other["boundary"] is None and other["status"] == "unmatched"
    msgs = " ".join(f["message"] for f in r["findings"])
    assert "scaled by 3" in msgs and "noised" in msgs and "from another model" in msgs
    assert "another prompt" not in msgs  # the file's own ids were run: no other prompt is named
    assert {c for c in codes(r)} >= {"slot_scaled", "slot_unmatched"}


def test_hf_hidden_states_capture_with_the_post_norm_last_entry(world):
    """ModelOpt-style HF dump: hidden_states[k] for ids [2, L//2, L]: the last is post-norm."""
    bounds, post = world.states(0)
    r = identify(_capture(world, [bounds[2], bounds[L // 2], post]), str(world.model),
                 drafter_ids=([2, L // 2, L], "eagle_aux_hidden_state_layer_ids"))
    assert [s["boundary"] for s in r["slots"]][:2] == [2, L // 2]
    assert r["slots"][2]["norm"] == "post" and r["slots"][2]["status"] == "match"
    conv = next(f for f in r["findings"] if f["code"] == "layer_convention")
    assert conv["follows"] == "hf_hidden_states" and conv["severity"] == "info"


def test_tokens_caps_the_run(world):
    r = identify_file(str(world.specforge("sf.ckpt")), str(world.model), tokens=9)
    assert r["tokens"] == 9 and r["tokens_run"] == 9
    assert [s["boundary"] for s in r["slots"]] == list(DEFAULT)


def test_ids_from_another_sample(world):
    bare = world.specforge("noids.ckpt", with_ids=False)
    r = identify_file(str(bare), str(world.model))
    assert "error" in r and "--ids-from" in r["error"]
    r = identify_file(str(bare), str(world.model), ids_from=str(world.specforge("sf.ckpt")))
    assert [s["boundary"] for s in r["slots"]] == list(DEFAULT)


def test_cancel_stops_the_model_run(world):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        identify_file(str(world.specforge("sf.ckpt")), str(world.model), cancel=cancel)


def test_unusable_inputs_are_one_line(world, tmp_path):
    sample = str(world.specforge("sf.ckpt"))
    (tmp_path / "empty").mkdir()
    r = identify_file(sample, str(tmp_path / "empty"))
    assert r["error"].endswith("not a Hugging Face model folder (no config.json)")
    (tmp_path / "cfgonly").mkdir()
    (tmp_path / "cfgonly" / "config.json").write_text('{"num_hidden_layers": 2, "hidden_size": 64}')
    assert "no weights" in identify_file(sample, str(tmp_path / "cfgonly"))["error"]
    assert "no such folder" in identify_file(sample, str(tmp_path / "nope"))["error"]
    narrow = tmp_path / "narrow.pt"
    torch.save({"input_ids": world.ids(0), "aux_hidden_state": torch.randn(1, 40, 3 * 32)}, narrow)
    err = identify_file(str(narrow), str(world.model))["error"]
    assert "32 wide" in err and "hidden size is 64" in err
    for r in (identify_file(sample, str(tmp_path / "empty")), identify_file(str(narrow), str(world.model))):
        assert "\n" not in r["error"]


def test_bare_capture_is_split_by_the_models_width(world, tmp_path):
    """A bare [T, 4*64] tensor would be guessed as 4 x 64 or 2 x 128...; the model settles it."""
    bounds, _ = world.states(0)
    path = tmp_path / "bare.pt"
    torch.save(torch.cat([bounds[b] for b in (1, 2, 4, 6)], -1), path)
    r = identify_file(str(path), str(world.model), ids_from=str(world.specforge("sf.ckpt")))
    assert [s["boundary"] for s in r["slots"]] == [1, 2, 4, 6]
