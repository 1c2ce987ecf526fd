"""The shape of a check's answer (`serve-check --json`, the dataset view's serve-check, its export)."""

from __future__ import annotations

from typing import Any, TypedDict

from eagle3_tui.dataset.serving.table import EngineCapture
from eagle3_tui.engines.results.findings import Finding


class ServingGroup(TypedDict):
    label: str
    files: int | None
    boundaries: list[int | None]


class ServingData(TypedDict, total=False):
    """The dataset's side of a check (data_from_layers; check adds "arch")."""

    layers: int
    boundaries: list[int | None]  # the majority's (check: in layer order)
    slots: list[int | None]  # check: the majority's in the files' slot order
    files: int | None
    groups: list[ServingGroup]  # the groups whose boundaries differ
    arch: str | None


class ServingFix(TypedDict, total=False):
    lines: list[str]
    message: str
    single: bool


class DrafterIds(TypedDict):
    ids: Any  # as the config.json writes them
    top_level_ids: Any
    norm_before_fc: bool
    architectures: Any


class ServingCheck(TypedDict):
    """`serve-check --json` and the dataset view's serve-check."""

    data: ServingData
    drafter: DrafterIds
    engines: list[EngineCapture]
    findings: list[Finding]
    fix: ServingFix | None
    read: dict[str, dict[str, str]]  # per engine the oldest and the newest release read
    asked: dict[str, str | None] | None  # --engine: the version asked per engine (None: not asked)


def key_of(b: int | None) -> int:
    """Boundaries sorted in layer order, an unidentified slot (None) first."""
    return -1 if b is None else b


def known(bounds: list[int | None]) -> list[int]:
    return [b for b in bounds if b is not None]
