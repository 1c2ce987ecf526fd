"""What serve-check --live returns (engines/live/check.py): what the engine fed the drafter,
what the data holds, and the engine's acceptance beside accept's."""

from __future__ import annotations

from typing import Any, TypedDict


class LiveReport(TypedDict, total=False):
    """serve-check --live's report (engines/live/check.py): the engine, what it fed the drafter and
    what the data holds, per slot, identified; with --accept its counters beside accept's."""

    engine: str
    version: str
    python: str
    ids: list[int] | None  # the aux layer ids the engine set on the target
    fed: list[int | None]  # boundaries of what it fed the drafter, per slot (identified)
    data: list[int | None]  # the training data's, per slot (identified)
    match: bool
    explained: str | None
    cosines: list[dict[str, Any]]  # per slot: the identification's cosines on both sides
    files: list[str]
    memory_gib: float
    seconds: float
    acceptance: dict[str, Any]
    offline: dict[str, Any]
    greedy_same: list[bool]
    error: str  # why the engine could not be run: the report is {"engine", "error"}
    computed: str  # "local" or "remote" (sources/)
