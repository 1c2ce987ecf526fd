"""I on a capture that holds the wrong states: the b column names the fault (5mlp*, 8mid*) and
a line under the table says it in words, at 120x40 and 80x24."""

from __future__ import annotations

import re

import pytest
import torch

from tests.helpers.capture_world import capture, make_close_llama, prompt
from tests.helpers.tui import make_model_app as make_app
from tests.helpers.tui import screen_text
from tests.ui.identify.test_identify_keys import _identified, _shown

pytestmark = pytest.mark.asyncio


def _b_column(text: str) -> dict[str, str]:
    """slot label -> its b cell: the first row of each slot under the table's header."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if "‖x‖ mean" in line)
    cells: dict[str, str] = {}
    for line in lines[head + 1:]:
        words = line.split("│")[-2].split() if line.count("│") >= 2 else line.split()
        if not words or words[0] not in ("aux0", "aux1", "aux2", "final") or words[0] in cells:
            break
        cells[words[0]] = words[1]
    return cells


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    root = tmp_path_factory.mktemp("ui-faults")
    model = make_close_llama(root / "llama")
    got = capture(model, prompt(0), torch.bfloat16)
    (root / "data").mkdir()
    path = root / "data" / "capture.pt"
    ids = torch.tensor(prompt(0))
    torch.save({"input_ids": ids, "loss_mask": torch.ones_like(ids),
                "aux_hidden_state": torch.cat([got["bounds"][3], got["mlp"][5], got["mid"][8]], -1)[None].bfloat16(),
                "hidden_state": got["post"][None].bfloat16()}, path)
    return model, path


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_I_names_a_branch_without_the_residual_and_a_mid_layer_state(faulty, size):
    model, path = faulty
    app = make_app(path, str(model))
    async with app.run_test(size=size) as pilot:
        await _shown(pilot, path)
        await pilot.press("I")
        await _identified(pilot)
        await pilot.pause()
        text = screen_text(app)
        assert _b_column(text) == {"aux0": "3*", "aux1": "5mlp*", "aux2": "8mid*", "final": "post*"}, text
        assert "slots at b 3, 5mlp, 8mid" in text  # the status line
        if size[0] >= 120:  # the words under the table (the narrow layout keeps the table only)
            # the slot labels are padded to one width ("aux1  5mlp*", "final after ...")
            assert re.search(r"aux1 +5mlp\*: b=6 without the residual \(layer 5's MLP output alone\)", text), text
