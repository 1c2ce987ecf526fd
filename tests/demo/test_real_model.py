"""The real pretrained target of the test world (tests/helpers/real_world.py) is a working network
with real models' massive activations, built once and cached."""

from __future__ import annotations

import pytest
import torch

from eagle3_tui.demo.real_model import chats, model_folder
from eagle3_tui.demo.real_questions import QUESTIONS
from tests.helpers.real_world import real_cache


@pytest.fixture(scope="module")
def smollm2_chats(smollm2_target):
    return chats(smollm2_target, QUESTIONS, cache=real_cache())


def test_the_real_model_answers_a_question_and_is_built_once(smollm2_target, smollm2_chats):
    first = smollm2_chats[0]  # "What is the capital of France?"
    assert "Paris" in smollm2_target.text(first.ids[first.response_start:])
    assert (smollm2_target.cfg.layers, smollm2_target.cfg.hidden, smollm2_target.cfg.vocab) == (30, 576, 49152)
    config = model_folder(real_cache()) / "config.json"
    before = config.stat().st_mtime_ns
    assert model_folder(real_cache()) / "config.json" == config and config.stat().st_mtime_ns == before


def test_the_first_token_carries_a_massive_activation_in_the_middle_layers(smollm2_target, smollm2_chats):
    states, _final = smollm2_target.boundaries(torch.tensor(smollm2_chats[0].ids), torch.bfloat16)
    norms = states[15].float().norm(dim=-1)
    assert norms[0] > 50 * norms[1:].median()
