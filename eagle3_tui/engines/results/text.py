"""The results that carry token text (engines/read/tokens.py annotate)."""

from __future__ import annotations

from typing import Union

from eagle3_tui.engines.results.accept import AcceptResult
from eagle3_tui.engines.results.compare import ComparisonResult
from eagle3_tui.engines.results.summary import Summary

#: the results that carry token text (engines/read/tokens.py annotate): a summary's tokens, a
#: comparison's aligned rows, a drafter's guesses
TextResult = Union[Summary, ComparisonResult, AcceptResult]
