"""`compare --model` says what identify's fault catalogue found, against the other side: "B slot 1
is A's b = 6 without the residual", "B is A one token late at every slot" (on a model whose
neighbouring boundaries are as close as a real model's, the capture made in bf16)."""

from __future__ import annotations

import json

import pytest
import torch

from eagle3_tui.commands import compare as cmd
from tests.helpers.capture_world import capture, lagged, make_close_llama, prompt
from tests.helpers.cli import run_command

BOUNDS = (3, 6, 9)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("faults")
    model = make_close_llama(root / "llama")
    ids = torch.tensor(prompt(0))
    train = capture(model, prompt(0), torch.float32)
    served = capture(model, prompt(0), torch.bfloat16)
    a = root / "data_0.ckpt"  # SpecForge's offline layout
    mask = torch.ones_like(ids)
    mask[:16] = 0  # the chat's prompt; the loss is on the response
    torch.save({"input_ids": ids, "loss_mask": mask,
                "aux_hidden_state": torch.cat([train["bounds"][b] for b in BOUNDS], -1)[None].bfloat16(),
                "hidden_state": train["post"][None].bfloat16()}, a)
    return root, model, a, ids, served


def _capture(root, name, ids, parts, final) -> str:
    path = root / name
    torch.save({"input_ids": ids, "aux_hidden_state": torch.cat(parts, -1).bfloat16(),
                "hidden_state": final.bfloat16()}, path)
    return str(path)


def _compare(capsys, *argv):
    return run_command(cmd, argv, capsys)[:2]


def test_a_capture_one_token_late_at_every_slot(world, capsys):
    root, model, a, ids, served = world
    b = _capture(root, "late.pt", ids, [lagged(served["bounds"][k], 1) for k in BOUNDS], lagged(served["post"], 1))
    rc, out = _compare(capsys, a, b, "--model", model, "--json")
    got = json.loads(out)
    lag = [f for f in got["findings"] if f["code"] == "capture_lag"]
    assert rc == 1 and lag and lag[0]["side"] == "b" and lag[0]["shift"] == 1
    assert lag[0]["message"].startswith("B is A one token late at every slot")
    rc, text = _compare(capsys, a, b, "--model", model)
    assert "B is A one token late at every slot" in text


def test_a_slot_without_the_residual_and_one_from_inside_a_layer(world, capsys):
    root, model, a, ids, served = world
    parts = [served["bounds"][3], served["mlp"][5], served["mid"][8]]
    b = _capture(root, "noresid.pt", ids, parts, served["post"])
    rc, out = _compare(capsys, a, b, "--model", model, "--json")
    faults = {f["slot"]: f["message"] for f in json.loads(out)["findings"] if f["code"] == "capture_fault"}
    assert rc == 1 and set(faults) == {1, 2}
    assert faults[1].startswith("B slot 1 is A's b = 6 without the residual (layer 5's MLP output alone)")
    assert faults[2].startswith("B slot 2 is A's b = 9 taken inside layer 8")


def test_a_correct_capture_has_no_fault(world, capsys):
    root, model, a, ids, served = world
    b = _capture(root, "good.pt", ids, [served["bounds"][k] for k in BOUNDS], served["post"])
    rc, out = _compare(capsys, a, b, "--model", model, "--json")
    codes = [f["code"] for f in json.loads(out)["findings"]]
    assert rc == 0 and "capture_fault" not in codes and "capture_lag" not in codes, codes


@pytest.mark.parametrize("shared", [0, 1, 2, 8])
def test_two_prompts_sharing_the_first_tokens_with_the_model(world, capsys, shared):
    """Each side is identified on its own ids; the pair is named another prompt, never a crash
    and never a capture fault."""
    root, model, a, _ids, _ = world
    other = prompt(50)
    other[:shared] = prompt(0)[:shared]
    if shared < len(other) and other[shared] == prompt(0)[shared]:
        other[shared] = (other[shared] % 200) + 1
    got = capture(model, other, torch.bfloat16)
    b = _capture(root, f"other_{shared}.pt", torch.tensor(other), [got["bounds"][k] for k in BOUNDS], got["post"])
    rc, out = _compare(capsys, a, b, "--model", model, "--json")
    r = json.loads(out)
    codes = {f["code"] for f in r["findings"]}
    assert rc == 1 and "token_divergence" in codes, codes
    assert not codes & {"capture_fault", "capture_lag", "identify_failed"}, codes
    assert r["identified"]["b"]["slots"][1]["boundary"] == 6  # B identified on its own prompt
    rc, text = _compare(capsys, a, b, "--model", model)
    assert rc == 1 and "B is another prompt" in text and "Traceback" not in text
