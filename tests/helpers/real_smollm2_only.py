"""Fixtures for the real-model modules that stay on SmolLM2: imported there, they override the
parametrized `real_target` and `real_chats` of tests/helpers/real_world.py (a plugin of every test, so
they cannot live in it). The dataset scan, pair and the views build 16..40-file datasets whose
second-family run would cost minutes of the suite; compare and identify, whose thresholds issue 41 is
about, run on both families."""

from __future__ import annotations

import pytest

from tests.helpers.real_world import real_cache


# the dataset scan, pair and the views build 16..40-file datasets whose second-family run would cost
# minutes of the suite; compare and identify, whose thresholds this is about, run on both.
@pytest.fixture(scope="module", name="real_target")
def smollm2_only_target(smollm2_target):
    return smollm2_target


@pytest.fixture(scope="module", name="real_chats")
def smollm2_only_chats(smollm2_target):
    from eagle3_tui.demo.real_model import chats
    from eagle3_tui.demo.real_questions import QUESTIONS

    return chats(smollm2_target, QUESTIONS, cache=real_cache())
