"""How an acceptance figure is named wherever it is shown (accept's text, the sample and compare
views, the exports): what it was scored against, and why B's figure differs from A's.

accept scores the drafter's guesses against one of two kinds of targets (engines/model/accept.py
target_tokens): with --model and a post-norm final state, the target model's own next token
(its LM head on that state: what an engine verifying greedily accepts); otherwise the data's
next token ids. The two differ wherever the data is not the target's own greedy text, so a
figure without its targets cannot be set beside another. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: target_source -> what the figure was scored against, in a sentence and on a crowded line
TARGETS = {"model": "the target model's next token (its head on the sample's final state)",
           "ids": "the data's next token ids"}
SHORT = {"model": "vs model's token", "ids": "vs data's ids"}


def targets(result: Mapping[str, Any], short: bool = False) -> str:
    """What `result`'s figures were scored against ("" for a result without a target_source)."""
    source = result.get("target_source")
    if source is None:
        return ""
    return (SHORT if short else TARGETS).get(source, str(source))


def pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def tau(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def why_b_differs(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """Why B's figure is not A's even when the states match: the reasons that hold, shortest
    first (other targets, other rows, fewer rows); [] when both were scored alike."""
    if a.get("error") or b.get("error") or a.get("top1") is None or b.get("top1") is None:
        return []
    why = []
    a_src, b_src = a.get("target_source"), b.get("target_source")
    if a_src != b_src and a_src and b_src:
        like = a.get("against_ids") if b_src == "ids" else None
        why.append(f"other targets: A {SHORT.get(a_src, a_src)}, B {SHORT.get(b_src, b_src)}"
                   + (f" (A {SHORT['ids']}: {pct(like.get('top1'))})" if like else ""))
    if a.get("rows_from") != b.get("rows_from") and a.get("rows_from") and b.get("rows_from"):
        why.append(f"other rows: A {a.get('rows_from')} ({a.get('rows')}), B {b.get('rows_from')} ({b.get('rows')})")
    elif a.get("rows") != b.get("rows"):
        why.append(f"other row counts: A {a.get('rows')}, B {b.get('rows')}")
    return why
