"""A drafter holding weights its forward would not apply is never scored in silence: `accept`
stops with one line naming the weights and the config keys (exit 2), `scan --drafter` and
`scan --accept` refuse it once and mark no data file, the TUI's start-up check says the same
line. Folders that disagree with their config the other way (a norm it asks for, absent; fc
for another number of aux states; two different norms in a later layer) are refused too."""

from __future__ import annotations

import json
import math

import pytest
import torch

from eagle3_tui.cli import main
from eagle3_tui.engines.model.accept import accept_file
from eagle3_tui.engines.model.folder_check import check_drafter
from tests.helpers.drafter import HEAD_DIM, HEADS, KV_HEADS, MLP, H, config, save_drafter


def _layer(i: int, *norms: str) -> dict:
    g = torch.Generator().manual_seed(i)
    p = f"layers.{i}."
    w = {p + n + ".weight": 1 + 0.1 * torch.randn(H, generator=g) for n in norms}
    for name, shape in (("self_attn.q_proj", (HEADS * HEAD_DIM, H)), ("self_attn.k_proj", (KV_HEADS * HEAD_DIM, H)),
                        ("self_attn.v_proj", (KV_HEADS * HEAD_DIM, H)), ("self_attn.o_proj", (H, HEADS * HEAD_DIM)),
                        ("mlp.gate_proj", (MLP, H)), ("mlp.up_proj", (MLP, H)), ("mlp.down_proj", (H, MLP))):
        w[p + name + ".weight"] = torch.randn(*shape, generator=g) / math.sqrt(shape[1])
    w[p + "post_attention_layernorm.weight"] = torch.ones(H)
    return w


def _bad(trained, tmp_path) -> dict[str, tuple[str, list[str]]]:
    """name -> (folder, what its one line must say)."""
    w = dict(trained.weights)
    fc_norm = {f"fc_norm.{i}.weight": torch.full((H,), 1.5) for i in range(3)}
    out = {}
    out["fc_norm weights, no fc_norm key"] = (
        save_drafter(str(tmp_path / "fcnorm"), {**w, **fc_norm}),
        ["fc_norm.0.weight, fc_norm.1.weight, fc_norm.2.weight", "config.json fc_norm not true, 3 aux states"])
    out["a second layer, num_hidden_layers 1"] = (
        save_drafter(str(tmp_path / "layer"), {**w, **_layer(1, "hidden_norm")}),
        ["layers.1.hidden_norm.weight", "and 5 more", "config.json num_hidden_layers = 1"])
    out["a bias no forward applies"] = (
        save_drafter(str(tmp_path / "bias"), {**w, "midlayer.self_attn.q_proj.bias": torch.zeros(HEADS * HEAD_DIM)}),
        ["midlayer.self_attn.q_proj.bias", "no EAGLE-3 config key applies them"])
    out["norm_before_fc without input_norm"] = (
        save_drafter(str(tmp_path / "nbf"), w, cfg={**config(), "norm_before_fc": True}),
        ["weights lack input_norm.weight", "norm_before_fc true"])
    out["4 aux states said, fc of 3"] = (
        save_drafter(str(tmp_path / "aux"), w, cfg={**config(), "num_aux_hidden_states": 4}),
        ["fc.weight takes 3 aux states", "num_aux_hidden_states names 4"])
    return out


def test_accept_refuses_each_in_one_line_naming_weights_and_keys(trained, tmp_path, capsys):
    sample = str(trained.data / "train_0.ckpt")
    for name, (folder, says) in _bad(trained, tmp_path).items():
        r = accept_file(sample, folder)
        assert "top1" not in r, name
        assert all(s in r["error"] for s in says), (name, r["error"])
        assert main(["accept", sample, "--drafter", folder]) == 2, name
        out, err = capsys.readouterr()
        (line,) = err.strip().splitlines()
        assert out == "" and all(s in line for s in says), (name, line)
        # the TUI's start-up check (names and headers only, no torch) says the same
        if name != "4 aux states said, fc of 3" and name != "norm_before_fc without input_norm":
            assert all(s in (check_drafter(folder) or "") for s in says), (name, check_drafter(folder))
    assert main(["accept", sample, "--drafter", folder, "--json"]) == 2
    assert "num_aux_hidden_states names 4" in json.loads(capsys.readouterr().out)["error"]


def test_later_layer_with_two_different_norms_is_refused(trained, tmp_path):
    """SGLang 0.5.23 applies hidden_norm in a later layer, vLLM 0.34.0 input_layernorm: with both
    present and different there is no one forward to score."""
    w = dict(trained.weights)
    two = _layer(1, "hidden_norm", "input_layernorm")
    folder = save_drafter(str(tmp_path / "two"), {**w, **two}, cfg={**config(), "num_hidden_layers": 2})
    r = accept_file(str(trained.data / "train_0.ckpt"), folder)
    assert "layer 1 holds both layers.1.hidden_norm.weight and layers.1.input_layernorm.weight" in r["error"]
    same = {**two, "layers.1.input_layernorm.weight": two["layers.1.hidden_norm.weight"].clone()}
    folder = save_drafter(str(tmp_path / "same"), {**w, **same}, cfg={**config(), "num_hidden_layers": 2})
    r = accept_file(str(trained.data / "train_0.ckpt"), folder)
    assert "error" not in r and r["drafter_info"]["shape"].startswith("SpecForge, 2 layers")


@pytest.fixture
def fc_norm_folder(trained, tmp_path):
    w = {**trained.weights, **{f"fc_norm.{i}.weight": torch.full((H,), 1.5) for i in range(3)}}
    return save_drafter(str(tmp_path / "drafter"), w)


def test_scan_drafter_refuses_once_and_scores_no_file(trained, fc_norm_folder, capsys):
    code = main(["scan", str(trained.data), "--drafter", fc_norm_folder, "--json", "--workers", "1", "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert "fc_norm.0.weight" in line and "config.json fc_norm not true" in line


def test_scan_accept_refuses_once_and_marks_no_file(trained, fc_norm_folder, capsys):
    code = main(["scan", str(trained.data), "--accept", fc_norm_folder, "--json", "--workers", "1", "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert "fc_norm.0.weight" in line and "config.json fc_norm not true" in line


@pytest.mark.parametrize("which", ["fc_norm weights", "no drafter at all"])
async def test_the_acceptance_step_says_it_once_and_marks_no_file(trained, fc_norm_folder, tmp_path, which):
    """The pipeline's step (the dataset view's, and scan --accept's on an SSH box, where the folder
    is not checked up front): the loader's line is the step's error, and no file is scored or
    named by a finding for it."""
    from eagle3_tui.dataset import acceptance as accept_step
    from eagle3_tui.dataset import pipeline as pl
    from eagle3_tui.engines.scan.options import ScanOptions
    from eagle3_tui.sources.local import LocalSource

    folder, says = (fc_norm_folder, "fc_norm.0.weight") if which == "fc_norm weights" else (str(tmp_path), "no config.json")
    pipeline = pl.DatasetPipeline(LocalSource(), str(trained.data),
                                  ScanOptions(accept=folder, workers=1, use_cache=False))
    events = [e async for e in pipeline.events()]
    (acc,) = [e for e in events if isinstance(e, pl.Acceptance)]
    assert acc.error is not None and says in acc.error and acc.files == ()
    assert not [f for f in acc.extra if f["kind"] == "accept_failed"]
    assert all(e["scored"] == 0 and not e.get("errors") for e in acc.entries)
    assert accept_step.drafter_failed(acc.error, folder)
