"""The compare view with --model: two prompts that share their first N tokens are named another
prompt (each side identified on its own ids), and a capture one token late is named as such."""

from __future__ import annotations

import pytest
import torch

from tests.helpers.capture_world import capture, lagged, make_close_llama, prompt
from tests.helpers.compare_view import started
from tests.helpers.tui import make_model_app, screen_text
from tests.ui.compare.test_compare_shared_prefix import _flat, _open

pytestmark = pytest.mark.asyncio
BOUNDS = (3, 6, 9)


def _save(path, ids, parts, final, mask=None):
    d = {"input_ids": ids, "aux_hidden_state": torch.cat(parts, -1)[None].bfloat16(),
         "hidden_state": final[None].bfloat16()}
    if mask is not None:
        d["loss_mask"] = mask
    torch.save(d, path)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare-model")
    model = make_close_llama(root / "llama")
    data = root / "data"
    data.mkdir()
    ids = torch.tensor(prompt(0))
    mask = torch.ones_like(ids)
    mask[:16] = 0
    train = capture(model, prompt(0), torch.float32)
    _save(data / "a.ckpt", ids, [train["bounds"][k] for k in BOUNDS], train["post"], mask)
    served = capture(model, prompt(0), torch.bfloat16)
    _save(data / "late.pt", ids, [lagged(served["bounds"][k], 1) for k in BOUNDS], lagged(served["post"], 1))
    for n in (0, 1, 2, 8):
        other = prompt(60 + n)
        other[:n] = prompt(0)[:n]
        if other[n] == prompt(0)[n]:
            other[n] = other[n] % 200 + 1
        got = capture(model, other, torch.bfloat16)
        _save(data / f"b_{n}.pt", torch.tensor(other), [got["bounds"][k] for k in BOUNDS], got["post"])
    return model, data


@pytest.mark.parametrize("shared", [0, 1, 2, 8])
async def test_another_prompt_with_the_model(world, shared):
    model, data = world
    app = make_model_app(data, str(model))
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        view = await _open(pilot, data, "a.ckpt", f"b_{shared}.pt")
        assert "error" not in view.result, view.result.get("error")
        text = _flat(app)
        assert "Nothing to compare" not in text and f"shares the first {shared} tokens" in text
        codes = {f["code"] for f in view.result["findings"]}
        assert "token_divergence" in codes and not codes & {"capture_fault", "capture_lag", "identify_failed"}


async def test_a_capture_one_token_late_is_named_in_the_view(world):
    model, data = world
    app = make_model_app(data, str(model))
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        view = await _open(pilot, data, "a.ckpt", "late.pt")
        assert "capture_lag" in {f["code"] for f in view.result["findings"]}
        assert "B is A one token late at every slot" in _flat(app), screen_text(app)
