"""Turning command-line targets into Sources, shared by the subcommands that take paths."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator
from typing import Any


def summarize_targets(paths: list[str], args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """Summary objects in the order of `paths`; local files are summarised in this process."""
    from eagle3_tui.samples.stats import summarize_file

    for path in paths:
        result = summarize_file(path, k=args.k, slots=args.slots, hidden=args.hidden)
        result["computed"] = "local"
        yield result
