"""What the TUI was given to go beyond the numbers in a file: a tokenizer (tokens as text), the
target model (which layer each slot is) and the trained drafter (acceptance). Each is a path as
the user typed it, on this machine or on the data's host; None when not given.

Screens and workers read these through the app; they never parse the command line themselves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from eagle3_tui.sources.tokenizer import TokenizerChoice
from eagle3_tui.target import Target, TargetError, parse_target


@dataclass(frozen=True)
class Analysis:
    tokenizer: str | None = None
    model: str | None = None
    drafter: str | None = None
    #: the tokenizer is --model's folder, not asked for: a folder without tokenizer.json is no error
    tokenizer_from_model: bool = False
    #: the drafter's vocab_mapping.pt (else one found above the open folder)
    vocab_mapping: str | None = None
    #: the Python the serving engine is installed in (serve-check's live run, v in its rows)
    engine_python: str | None = None

    @classmethod
    def from_options(cls, tokenizer: str | None = None, model: str | None = None,
                     drafter: str | None = None, vocab_mapping: str | None = None,
                     engine_python: str | None = None) -> Analysis:
        """As the command line gives them: $EAGLE3_TUI_TOKENIZER is the default tokenizer, and a
        model folder that holds a tokenizer.json gives the tokenizer too."""
        if tokenizer is None:
            tokenizer = os.environ.get("EAGLE3_TUI_TOKENIZER") or None
        if tokenizer is None and model is not None:
            return cls(model, model, drafter, tokenizer_from_model=True, vocab_mapping=vocab_mapping,
                       engine_python=engine_python)
        return cls(tokenizer, model, drafter, vocab_mapping=vocab_mapping, engine_python=engine_python)

    def tokenizer_choice(self) -> TokenizerChoice:
        """--tokenizer read as the CLI reads it (a plain path is on this machine, `host:/p` on that
        host; a local tokenizer decodes remote data here), or --model's folder on the data's
        machine, where a missing tokenizer.json is no error."""
        return TokenizerChoice(self.tokenizer, follows_data=self.tokenizer_from_model,
                               optional=self.tokenizer_from_model)

    def path_for(self, what: str, data: Target) -> str | None:
        """The path of `what` ("tokenizer", "model", "drafter", "vocab_mapping") for data on `data`'s
        machine: the path itself when it lives there, None when it is not given or elsewhere.

        The model, the drafter and the vocab mapping are read next to the data, so a plain path
        names a file or folder on the data's machine (the CLI's one rule: `identify`, `accept`,
        `scan --vocab-mapping`); a tokenizer given as a plain path is on this machine (a
        tokenizer here decodes remote data here too: see tokenizer_choice, which the screens use)."""
        if what == "tokenizer":
            return self.tokenizer_choice().on_source(data)
        text = getattr(self, what)
        if not text:
            return None
        try:
            there = parse_target(text)
        except TargetError:
            return None
        if not there.is_remote and what in ("model", "drafter", "vocab_mapping"):
            return there.path
        if there.place == data.place:
            return there.path
        return None
