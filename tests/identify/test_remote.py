"""identify next to the model over SSH: both real servers, the scores travel, the model does not."""

from __future__ import annotations

import json

import pytest

from tests.helpers.identify_world import DEFAULT
from tests.helpers.ssh import cli

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_remote_identify_is_the_local_identify(server, shared_box, world):
    from eagle3_tui.sources.local import LocalSource

    sample = str(world.specforge("sf.ckpt"))
    box = await shared_box()
    remote = await box.identify(sample, model=str(world.model), device="cpu")
    local = await LocalSource().identify(sample, model=str(world.model), device="cpu")
    assert remote.pop("computed") == "remote" and local.pop("computed") == "local"
    assert [s["boundary"] for s in remote["slots"]] == list(DEFAULT)
    assert remote == local


async def test_remote_unusable_input_comes_back_as_an_error(server, shared_box, world, tmp_path):
    box = await shared_box()
    r = await box.identify(str(world.specforge("sf.ckpt")), model=str(tmp_path))
    assert r["computed"] == "remote" and "no config.json" in r["error"]


async def test_no_transformers_on_the_box(server, shared_box, world, python_without_transformers):
    box = await shared_box(python_without_transformers)
    r = await box.identify(str(world.specforge("sf.ckpt")), model=str(world.model))
    assert r["error"] == "transformers is not installed here: pip install eagle3-tui[model]"
    assert r["computed"] == "remote"


async def test_no_torch_on_the_box_does_not_fall_back(server, shared_box, world, python_without_torch):
    box = await shared_box(python_without_torch)
    r = await box.identify(str(world.specforge("sf.ckpt")), model=str(world.model))
    assert "cannot run the model on" in r["error"] and "torch and transformers" in r["error"]


async def test_cli_over_ssh(home, world):  # noqa: F811 - OpenSSH only, as tests/ssh/test_cli does
    sample = world.specforge("sf.ckpt")
    rc, out, err = await cli(home, "identify", f"box:{sample}", "--model", f"box:{world.model}", "--json")
    assert rc == 0, err
    r = json.loads(out)
    assert r["computed"] == "remote" and r["path"] == f"box:{sample}"
    assert [s["boundary"] for s in r["slots"]] == list(DEFAULT)
    rc, out, err = await cli(home, "identify", f"box:{sample}", "--model", str(world.model.parent / "nope"))
    assert rc == 2 and out == "" and "no such folder" in err


async def test_a_capture_fault_is_named_on_the_box_as_here(server, shared_box, tmp_path):
    """The fault catalogue runs inside the agent: a capture one token late and a branch without
    the residual come back named, and equal to the local answer."""
    import torch

    from eagle3_tui.sources.local import LocalSource
    from tests.helpers.capture_world import capture, lagged, make_close_llama, prompt

    model = make_close_llama(tmp_path / "llama")
    got = capture(model, prompt(0), torch.bfloat16)
    path = tmp_path / "capture.pt"
    torch.save({"input_ids": torch.tensor(prompt(0)),
                "aux_hidden_state": torch.cat([lagged(got["bounds"][3], 1), got["mlp"][5]], -1).bfloat16()}, path)
    box = await shared_box()
    remote = await box.identify(str(path), model=str(model), device="cpu")
    local = await LocalSource().identify(str(path), model=str(model), device="cpu")
    assert remote.pop("computed") == "remote" and local.pop("computed") == "local"
    assert [s["status"] for s in remote["slots"]] == ["lag", "no_residual"]
    assert {f["code"] for f in remote["findings"]} >= {"slot_lag", "slot_no_residual"}
    assert remote == local
