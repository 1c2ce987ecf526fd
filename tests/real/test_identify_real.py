"""identify on each real family (SmolLM2-135M-Instruct, 30 layers; Gemma 3 270M, 18 layers): every capture fault of the
catalogue (engines/model/capture_faults.py) is named, and correct captures (bf16, fp8 with a scale,
fp8 cast as is, 1% kernel noise) match silently. One module-scoped set of SpecForge-layout files
(input_ids + aux_hidden_state [1, T, 3H], a 45..60-token chat, the model run in bf16) is shared.

The fp8 cast as is (no scale) clips row 0's massive activation (|x| up to 25,000 at b 15 and 27,
e4m3 stops at 448: that row's cosine drops to 0.31); before identify set massive rows aside, that
one row of 45 put b 15 and b 27 outside the bound ("inexact", and a layer_convention warning)."""

from __future__ import annotations

import json

import pytest
import torch

from eagle3_tui.commands import identify as identify_cmd
from eagle3_tui.engines.model.capture_faults import TOLERANCE
from tests.helpers.capture_world import capture, fp8_round_trip, kernel_noise, lagged
from tests.helpers.cli import run_command

FAULT_CODES = {"slot_lag", "slot_no_residual", "slot_normalized", "slot_mid_layer", "slot_inexact",
               "final_lag", "final_no_residual", "final_normalized", "final_mid_layer", "capture_lag"}


@pytest.fixture(scope="module")
def real_faults(tmp_path_factory, real_target, real_chats):
    """{name: (path, aux boundaries)} of correct and faulty captures of one chat."""
    root = tmp_path_factory.mktemp("real-identify")
    chat = min((c for c in real_chats if len(c.ids) >= 45), key=lambda c: len(c.ids))
    ids = chat.ids[:60]
    run = capture(real_target.folder, ids, torch.bfloat16)
    aux = list(real_target.cfg.aux_boundaries)
    B = run["bounds"]
    parts = {
        "ok": ([B[b] for b in aux], run["post"]),
        "fp8_scaled": ([fp8_round_trip(B[b]).to(torch.bfloat16) for b in aux], None),
        "fp8_cast": ([B[b].to(torch.float8_e4m3fn) for b in aux], None),
        "noise_1pct": ([kernel_noise(B[b], k).to(torch.bfloat16) for k, b in enumerate(aux)], None),
        "lag": ([lagged(B[b], 1) for b in aux], lagged(run["post"], 1)),
        "mlp": ([run["mlp"][b - 1] for b in aux], None),
        "normalized": ([run["normalized"][b] for b in aux], None),
        "mid_layer": ([run["mid"][b - 1] for b in aux], None),
        "hf_as_specforge": ([B[b - 1] for b in aux], None),  # ids [1, 14, 26] read as hidden_states[id]
    }
    out = {}
    for name, (slots, final) in parts.items():
        obj = {"input_ids": torch.tensor(ids), "aux_hidden_state": torch.cat(
            [s if s.dtype == torch.float8_e4m3fn else s.to(torch.bfloat16) for s in slots], -1)[None]}
        if final is not None:
            obj["hidden_state"] = final.to(torch.bfloat16)[None]
        torch.save(obj, root / f"{name}.ckpt")
        out[name] = root / f"{name}.ckpt"
    return out, aux


def _identify(real_target, path, capsys, rc_want: int = 1) -> dict:
    """The CLI's JSON; exit 0 for a correct capture, 1 (blocking findings) for a faulty one."""
    rc, out, err = run_command(identify_cmd, [path, "--model", real_target.folder, "--json"], capsys)
    assert rc == rc_want, err or out[-2000:]
    return json.loads(out)


def _codes(r) -> list[str]:
    return [f["code"] for f in r["findings"]]


def _report(name, r):
    """The numbers docs/identify.md records (pytest -s prints them)."""
    for s in r["slots"]:
        f = s.get("fault") or {}
        print(f"{name}: {s['status']} b={s.get('boundary')} 1-cos={1 - s['cosine']:.5f} "
              f"fault={f.get('short')} fault 1-cos={f.get('distance')} margin={f.get('margin')} "
              f"runner-up={s.get('second')}")


@pytest.mark.parametrize("name", ["ok", "fp8_scaled", "fp8_cast", "noise_1pct"])
def test_correct_real_captures_match_silently(real_target, real_faults, capsys, name):
    if name == "fp8_cast" and real_target.family.name != "smollm2":
        # e4m3 stops at 448: on SmolLM2 only row 0's massive activation clips; Gemma 3's ordinary rows
        # hold values in the thousands, so a cast without a scale is no correct capture there
        pytest.skip("an fp8 cast without a scale clips every row of Gemma 3's residual stream")
    files, aux = real_faults
    r = _identify(real_target, files[name], capsys, rc_want=0)
    _report(name, r)
    assert [(s["status"], s["boundary"]) for s in r["slots"]] == [("match", b) for b in aux], r["slots"]
    assert all(1 - s["cosine"] < TOLERANCE / 2 for s in r["slots"])
    assert not set(_codes(r)) & FAULT_CODES, r["findings"]
    conv = next(f for f in r["findings"] if f["code"] == "layer_convention")
    assert conv["severity"] == "info", conv
    if name == "ok":
        assert r["final"]["status"] == "match" and r["final"]["norm"] == "post"


def test_a_capture_one_token_late_is_named_on_the_real_model(real_target, real_faults, capsys):
    files, aux = real_faults
    r = _identify(real_target, files["lag"], capsys)
    _report("lag", r)
    assert [(s["status"], s["boundary"], s["fault"]["shift"]) for s in r["slots"]] == [("lag", b, 1) for b in aux]
    assert next(f for f in r["findings"] if f["code"] == "capture_lag")["shift"] == 1
    assert r["final"]["status"] == "lag" and "final_lag" in _codes(r)
    # clear of the next catalogue state by > 3x the match bound (SmolLM2 0.028..0.042, Gemma 3 0.0067..0.022)
    assert all(s["fault"]["margin"] > 3 * TOLERANCE for s in r["slots"])


@pytest.mark.parametrize("name,status,kind,layer_of", [
    ("mlp", "no_residual", "mlp", lambda b: b - 1),          # layer b-1's MLP output without the residual
    ("normalized", "normalized", "normalized", lambda b: b),  # layer b's input_layernorm output
    ("mid_layer", "mid_layer", "mid", lambda b: b - 1),       # inside layer b-1, after attention only
])
def test_in_layer_faults_are_named_on_the_real_model(real_target, real_faults, capsys, name, status, kind, layer_of):
    files, aux = real_faults
    r = _identify(real_target, files[name], capsys)
    _report(name, r)
    assert [(s["status"], s["fault"]["kind"], s["fault"]["layer"]) for s in r["slots"]] == [
        (status, kind, layer_of(b)) for b in aux], r["slots"]
    assert all(s["boundary"] is None for s in r["slots"])
    assert f"slot_{status}" in _codes(r)
    # SmolLM2 0.031..0.38; Gemma 3's mid-layer state 0.008..0.019 (its layers change the stream little)
    assert all(s["fault"]["margin"] > 3 * TOLERANCE for s in r["slots"])


def test_hf_indices_read_as_specforge_ids_are_named(real_target, real_faults, capsys):
    """SpecForge's ids [1, 14, 26] mean b = id + 1; a capture that took HF hidden_states[id] holds
    b = 1, 14, 26: every slot matches, and layer_convention says the data follows the other reading."""
    files, aux = real_faults
    r = _identify(real_target, files["hf_as_specforge"], capsys)
    _report("hf_as_specforge", r)
    assert [(s["status"], s["boundary"]) for s in r["slots"]] == [("match", b - 1) for b in aux]
    conv = next(f for f in r["findings"] if f["code"] == "layer_convention")
    assert conv["severity"] == "warning" and conv["follows"] == "input", conv
