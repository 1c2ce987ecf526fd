"""layer_convention names the producer that wrote the file (issue 20, item 6): a ModelOpt dump
is at ModelOpt's default ids (sorted({1, L//2-1, L-4}), output of layer), a speculators file at
vLLM's capture ids (input of layer), even where SpecForge's defaults give the same boundaries."""

from __future__ import annotations

import pytest
import torch

from eagle3_tui.engines.model.conventions import convention_finding
from eagle3_tui.engines.model.identify import identify_file
from tests.helpers.identify_world import DEFAULT, L


def _convention(r: dict) -> dict:
    assert "error" not in r, r.get("error")
    return next(f for f in r["findings"] if f["code"] == "layer_convention")


def _modelopt(world, name: str) -> str:
    """ModelOpt's HF dump ({conversation_id}.pt): input_ids, hidden_states (the normed output),
    aux_hidden_states [T, 3H] at its default layer ids read as output of layer, loss_mask,
    conversation_id, float32 for a float32 model (FORMATS.md)."""
    bounds, post = world.states(0, torch.float32)
    ids = sorted({1, L // 2 - 1, L - 4})
    aux = torch.cat([bounds[i + 1] for i in ids], -1)
    path = world.root / name
    torch.save({"input_ids": world.ids(0), "hidden_states": post, "aux_hidden_states": aux,
                "loss_mask": torch.ones_like(world.ids(0)), "conversation_id": "conv-7"}, path)
    return str(path)


def _speculators_fp8(world, name: str) -> str:
    """speculators' FP8 connector: hidden_states float8_e4m3fn [T, k+1, H] and a per-row float32
    scale hidden_states_scales [T, 1, 1] (values = fp8 * scale)."""
    from safetensors.torch import save_file

    bounds, _ = world.states(0)
    hs = torch.stack([bounds[b] for b in DEFAULT] + [bounds[L]], 1).float()
    scale = hs.abs().amax(dim=(1, 2), keepdim=True).clamp(min=1e-12) / 448.0
    fp8 = (hs / scale).to(torch.float8_e4m3fn)
    path = world.root / name
    save_file({"token_ids": world.ids(0), "hidden_states": fp8.contiguous(),
               "hidden_states_scales": scale.contiguous()}, str(path))
    return str(path)


def test_a_modelopt_dump_names_modelopts_default_ids(world):
    r = identify_file(_modelopt(world, "conv-7.pt"), str(world.model))
    assert r["schema"] == "ModelOpt offline"
    f = _convention(r)
    assert (f["ids_from"], f["follows"], f["severity"]) == ("ModelOpt default ids", "output", "info")
    assert f["ids"] == sorted({1, L // 2 - 1, L - 4})
    assert "ModelOpt default ids" in f["message"] and "SpecForge" not in f["message"]


@pytest.mark.parametrize("kind, schema, named", [
    ("bf16", "speculators", "speculators default ids (vLLM's capture)"),
    ("fp8", "speculators (FP8)", "vLLM default ids (speculators' FP8 connector)"),
])
def test_a_speculators_file_names_vllms_capture_ids(world, kind, schema, named):
    path = str(world.speculators("hs_0.safetensors")) if kind == "bf16" else _speculators_fp8(world, "hs_1.safetensors")
    r = identify_file(path, str(world.model))
    assert r["schema"] == schema
    f = _convention(r)
    assert (f["ids_from"], f["follows"], f["ids"]) == (named, "input", [2, L // 2, L - 3])
    assert "SpecForge" not in f["message"]


def test_a_specforge_file_still_names_specforges_ids(world):
    f = _convention(identify_file(str(world.specforge("sf_conv.ckpt")), str(world.model)))
    assert (f["ids_from"], f["follows"]) == ("SpecForge default ids", "output")


@pytest.mark.parametrize("layers", [6, 7, 8, 32, 61])
def test_modelopts_ids_are_a_set_even_where_they_collide(layers):
    """sorted({1, L//2-1, L-4}): for L = 6 two of them are the same layer."""
    expected = sorted({1, layers // 2 - 1, layers - 4})
    got = [i + 1 for i in expected]
    block, fs = convention_finding(got, layers, None, "ModelOpt offline")
    assert fs[0]["ids_from"] == "ModelOpt default ids" and fs[0]["ids"] == expected
    assert fs[0]["follows"] == "output"
    # without a schema the same boundaries are SpecForge's reading
    _, fs = convention_finding(got, layers, None)
    assert fs[0]["ids_from"] in ("SpecForge default ids", "vLLM default ids")
