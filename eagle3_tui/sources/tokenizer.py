"""Where --tokenizer decodes, for the CLI and the TUI alike (one reading, one door).

The rule, as the user types it: `host:/path` is a tokenizer on that host, a plain path is one on
this machine. For data on the same machine the tokenizer goes to the data's Source (the box
decodes, or fetches tokenizer.json once); for a tokenizer here and data on a box, the box sends
the ids and the text is decoded here after the numbers came back; a tokenizer on a third machine
is refused with one line. The TUI's tokenizer taken from --model's folder follows the model: a
plain path is then on the data's machine (as --model reads it), and a folder without
tokenizer.json there is no error (ids only).

In sources/ so that both commands/ and ui/ may import it (tests/test_layers.py).
"""

from __future__ import annotations

from typing import TypeVar

from eagle3_tui.engines.read.tokens import annotate
from eagle3_tui.engines.results.accept import AcceptResult
from eagle3_tui.engines.results.compare import ComparisonResult
from eagle3_tui.engines.results.summary import Summary
from eagle3_tui.target import Target, TargetError, parse_target

NO_TOKENIZER_FILE = "no tokenizer.json"

#: the results that carry token text: a summary's tokens, a comparison's aligned rows, a drafter's guesses
TextResult = TypeVar("TextResult", Summary, ComparisonResult, AcceptResult)


def with_token_text(result: TextResult, tokenizer: str | None) -> TextResult:
    """`result` with its token text when `tokenizer` (a path here) is given, or why not in
    "text_error": engines/read/tokens.py annotate, which adds it to the dict it is handed."""
    annotate(result, tokenizer)
    return result


class TokenizerChoice:
    """A --tokenizer as given (or None), read for the machine of the data it decodes."""

    def __init__(self, text: str | None, *, follows_data: bool = False, optional: bool = False):
        #: a plain path names a folder on the data's machine (the TUI's --model folder)
        self.follows_data = follows_data
        #: a folder without tokenizer.json is no error: the ids are shown alone
        self.optional = optional
        self.target: Target | None = None
        self.error: str | None = None
        if text:
            try:
                self.target = parse_target(text)
            except TargetError as err:
                self.error = f"--tokenizer: {err}"

    def where(self, data: Target) -> Target | None:
        """The tokenizer as a target, its machine resolved for data on `data`'s machine."""
        if self.target is not None and self.follows_data and not self.target.is_remote:
            return data.with_path(self.target.path)
        return self.target

    def on_source(self, data: Target | None) -> str | None:
        """The tokenizer path to hand the data's Source, when they share a machine."""
        there = self.where(data) if data is not None else None
        if there is not None and data is not None and there.place == data.place:
            return there.path
        return None

    def decodes_here(self, data: Target | None) -> bool:
        """A tokenizer on this machine for data on a box: finish() decodes (CPU work: a thread)."""
        there = self.where(data) if data is not None else None
        return there is not None and data is not None and data.is_remote and not there.is_remote

    def finish(self, result: TextResult, data: Target) -> TextResult:
        """Decode here what the data's Source could not (a local tokenizer, remote data); a summary
        or a comparison alike. What went wrong is one line in "text_error", the numbers stay."""
        if self.error:
            result.setdefault("text_error", self.error)
        there = self.where(data)
        if there is not None and there.place != data.place and "error" not in result:
            if there.is_remote:
                result["text_error"] = (f"tokenizer {there.display()} is on another machine than "
                                        "the data: give one on this machine or on the data's host")
            else:
                result = with_token_text(result, there.path)
        if self.optional and NO_TOKENIZER_FILE in str(result.get("text_error", "")):
            result.pop("text_error")
        return result
