"""The headline a bookmark keeps of its sample: enough to recognise it without reloading anything."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypedDict


class HeadlineSlot(TypedDict):
    label: str | None
    boundary: int | None
    norm_mean: float | None


class Headline(TypedDict, total=False):
    """What a bookmark keeps of its sample (stored as JSON): the summary's facts, or its error."""

    error: str
    not_sample: bool
    schema: str | None
    tokens: int | None
    valid_tokens: int | None
    hidden: int | None
    dtype: str | None
    slots: list[HeadlineSlot]
    final: HeadlineSlot | None
    final_norm: str | None
    nonfinite: int  # NaN and Inf values over every part


def headline_from_summary(summary: Mapping[str, Any]) -> Headline:
    """Schema, T, H, dtype and per-slot norm means from a summary dict (see stats.summarize;
    engines/results/summary.py Summary, which bookmarks, standard library only, do not import)."""
    error = summary.get("error")
    if error:
        line = str(error).splitlines()[0] if str(error) else "error"
        return {"error": line[:300], "not_sample": bool(summary.get("not_sample"))}
    slots = [_slot(s) for s in summary.get("slots") or []]
    final = summary.get("final")
    parts = [*(summary.get("slots") or []), *([final] if final else [])]
    return {
        "schema": summary.get("schema"),
        "tokens": summary.get("tokens"),
        "valid_tokens": summary.get("valid_tokens"),
        "hidden": summary.get("hidden"),
        "dtype": summary.get("dtype"),
        "slots": slots,
        "final": _slot(final) if final else None,
        "final_norm": summary.get("final_norm"),
        "nonfinite": sum(int(p.get("nan") or 0) + int(p.get("inf") or 0) for p in parts),
    }


def headline_text(headline: Headline | None) -> str:
    """One short line, e.g. `specforge T=128/120 H=64 bf16 norms 1.2 3.4 5.6 final 7.8 post`."""
    if not headline:
        return ""
    if headline.get("error"):
        return ("not a sample: " if headline.get("not_sample") else "error: ") + headline["error"]
    words = [str(headline.get("schema") or "?")]
    tokens, valid = headline.get("tokens"), headline.get("valid_tokens")
    if tokens is not None:
        words.append(f"T={tokens}" + (f"/{valid}" if valid is not None and valid != tokens else ""))
    if headline.get("hidden") is not None:
        words.append(f"H={headline['hidden']}")
    if headline.get("dtype"):
        words.append(str(headline["dtype"]))
    slots = headline.get("slots") or []
    if slots:
        words.append("norms " + " ".join(_number(s.get("norm_mean")) for s in slots))
    final = headline.get("final")
    if final:
        words.append("final " + _number(final.get("norm_mean")))
        if headline.get("final_norm"):
            words.append(str(headline["final_norm"]))
    if headline.get("nonfinite"):
        words.append(f"NaN/Inf {headline['nonfinite']}")
    return " ".join(words)


def _slot(slot: Mapping[str, Any]) -> HeadlineSlot:
    return {
        "label": slot.get("label"),
        "boundary": slot.get("boundary"),
        "norm_mean": _finite(slot.get("norm_mean")),
    }


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _number(value: Any) -> str:
    return "nan" if value is None else f"{value:.4g}"
