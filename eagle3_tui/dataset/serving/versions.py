"""Release numbers and ranges: what an engine's releases read are, how a range of them is named
(half-open: "0.5.8 ≤ v < 0.5.12"), and the `--engine NAME==VERSION` a user serves with.

Each engine module keeps its hand-read table as CHANGES, one Change per release where what it does
with a drafter changed (the file, lines and release it was read from), and RELEASES, every release
read. The table (table.py) cuts an engine's releases at every change, so a range never straddles
one; a version past the newest read is read with the newest's rules, and said to be unread.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "tokenspeed": "tokenspeed",
         "specforge": "SpecForge"}

_RELEASE = re.compile(r"(\d+(?:\.\d+)*)(?:\.post(\d+))?")


class Change(NamedTuple):
    """A release from which an engine reads a drafter otherwise: the first release read that has it."""

    since: str
    what: str
    source: str  # file, lines @ release


def key(version: str) -> tuple[tuple[int, ...], int]:
    """A release number to compare: 0.4.8 < 0.4.8.post1 < 0.4.9 < 0.4.10. ValueError for anything
    else (a pre-release, a local version, a word)."""
    m = _RELEASE.fullmatch(version.strip())
    if m is None:
        raise ValueError(f"{version!r} is not a release number (like 0.5.8 or 0.4.8.post1)")
    numbers = tuple(int(n) for n in m.group(1).split("."))
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers = numbers[:-1]
    return numbers, -1 if m.group(2) is None else int(m.group(2))


def at_least(version: str, since: str) -> bool:
    return key(version) >= key(since)


def within(version: str, since: str | None, until: str | None) -> bool:
    """since ≤ version < until (a missing bound is open)."""
    k = key(version)
    return (since is None or key(since) <= k) and (until is None or k < key(until))


def span(since: str | None, until: str | None) -> str:
    """A range of releases, half-open: "0.5.8 ≤ v < 0.5.12", "0.5.22 ≤ v", "v < 0.1.0"."""
    if since and until:
        return f"{since} ≤ v < {until}"
    if since:
        return f"{since} ≤ v"
    return f"v < {until}" if until else "all"


def parse_engine(text: str) -> tuple[str, str | None]:
    """`--engine NAME==VERSION` (or NAME alone): the engine's key and the version, or ValueError
    saying what is wrong."""
    name, sep, version = text.partition("==")
    found = next((k for k, v in NAMES.items() if name.strip().lower() in (k, v.lower())), None)
    if found is None:
        raise ValueError(f"--engine {text!r}: the engines are {', '.join(NAMES)} (NAME==VERSION, e.g. vllm==0.33.0)")
    if not sep:
        return found, None
    key(version)  # ValueError for what is not a release number
    return found, version.strip()


def read_as(version: str, releases: tuple[str, ...]) -> str | None:
    """The release whose rules a version is read with when it is not itself a release read: the
    newest read for a later one, the oldest for an earlier one, the release below it otherwise;
    None when it was read."""
    if version in releases or any(key(r) == key(version) for r in releases):
        return None
    if key(version) > key(releases[-1]):
        return releases[-1]
    if key(version) < key(releases[0]):
        return releases[0]
    return max((r for r in releases if key(r) < key(version)), key=key)


def label(row: Mapping[str, Any]) -> str:
    """An engine row's name: the engine, its range of releases, its runner where there are two."""
    name = NAMES[row["engine"]]
    if row.get("since") or row.get("until"):
        name += " " + span(row.get("since"), row.get("until"))
    return f"{name}, {row['variant']}" if row.get("variant") else name


def asked_engines(values: list[str] | None) -> dict[str, str | None] | None:
    """serve-check's `--engine` options, one per engine: {engine: version or None}, or None when
    none was given (every engine's rows). ValueError for a name, a version or an engine twice."""
    if not values:
        return None
    out: dict[str, str | None] = {}
    for text in values:
        engine, version = parse_engine(text)
        if engine in out:
            raise ValueError(f"--engine {NAMES[engine]} is given twice: one version per engine")
        out[engine] = version
    return out
