"""What the TUI was given beyond the data (--model, --drafter, --tokenizer) is checked once, at
start, in a worker (engines/model/folder_check.py: config.json and the weights' headers, no
torch): what is wrong is said once, and the parts that need it (the drafter's acceptance, I) are
off instead of failing on every sample with the same cut-off line.

A model or drafter on the data's SSH box is checked there, by the agent (Source.check_folders).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from eagle3_tui.sources.base import Source
    from eagle3_tui.target import Target
    from eagle3_tui.ui.start.analysis import Analysis

#: what each option is needed for, said after what is wrong with it
NEEDED_FOR = {"model": "I and the drafter's acceptance are off", "drafter": "the drafter's acceptance is off",
              "tokenizer": "tokens are shown as ids"}


class AnalysisChecked(Message):
    """The options were checked: what is unusable, by option ("model", "drafter", "tokenizer")."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__()
        self.problems = problems


def check(analysis: Analysis, data: Target, data_here: bool) -> dict[str, str]:
    """option -> one line of what is wrong with it (blocking: run it in a thread)."""
    from eagle3_tui.engines.model import folder_check  # lazy: with the drafter's code, ~23 ms not paid at start

    model = analysis.path_for("model", data) if data_here else None
    drafter = analysis.path_for("drafter", data) if data_here else None
    problems = folder_check.check_folders(model, drafter)
    choice = analysis.tokenizer_choice()
    there = choice.where(data)
    readable_here = there is not None and (not there.is_remote or (data_here and there.place == data.place))
    if analysis.tokenizer and not analysis.tokenizer_from_model and readable_here and there is not None and (
            p := folder_check.check_tokenizer(there.path)):
        problems["tokenizer"] = p
    return problems


async def check_with(source: Source, analysis: Analysis, data: Target) -> dict[str, str]:
    """check(), with a model and drafter on the data's SSH box checked on the box."""
    if source.host is None:
        return await asyncio.to_thread(check, analysis, data, True)
    problems = await asyncio.to_thread(check, analysis, data, False)  # a tokenizer on this machine
    model, drafter = analysis.path_for("model", data), analysis.path_for("drafter", data)
    if model or drafter:
        problems.update(await source.check_folders(model, drafter))
    return {what: problems[what] for what in NEEDED_FOR if what in problems}


def said(problems: dict[str, str], sep: str = " · ") -> str:
    """The one message: each unusable option, what is wrong, what is off because of it."""
    return sep.join(f"--{what} unusable: {why} ({NEEDED_FOR[what]})" for what, why in problems.items())


def acceptance_off(problems: dict[str, str]) -> dict[str, str] | None:
    """The sample header's drafter line when the drafter cannot run (None: it can)."""
    for what in ("drafter", "model"):
        if what in problems:
            return {"error": f"off: bad --{what} (said at start)"}
    return None
