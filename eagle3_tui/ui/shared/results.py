"""The engines' result dicts between their TypedDicts (engines/results.py, what the views hold)
and the engine helpers that annotate any result as `dict[str, Any]` (identify's attach and brief,
the tokenizer's finish, bookmarks' headline). Both are the same dict at
run time: these only say so to the type checker, in one place, until those helpers take the
TypedDicts (or a Mapping)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from eagle3_tui.engines.results import ComparisonResult, Summary


def plain(result: Mapping[str, Any]) -> dict[str, Any]:
    """`result` itself, as the helpers that take `dict[str, Any]` are typed."""
    return cast("dict[str, Any]", result)


def as_summary(result: Mapping[str, Any]) -> Summary:
    """A summary an engine helper handed back as a plain dict (decoded, annotated, attached)."""
    return cast("Summary", result)


def as_comparison(result: Mapping[str, Any]) -> ComparisonResult:
    return cast("ComparisonResult", result)
