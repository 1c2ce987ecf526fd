"""The Capture shape: what one engine, at one range of releases, does with a drafter's config.json,
and the helpers every engine's rule builds it with (an id to a boundary, a guess, a failure).

Boundary b (FORMATS.md): 0 the embedding output, b = i + 1 the output of decoder layer i, b = L the
last residual before the final norm. Ids are taken as the engines take them, not as they should be:
a float or a bool goes through `id + 1` (4.0 + 1 == 5 is captured, 4.5 + 1 never is), a string,
dict or list does not (TypeError).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, TypedDict

from eagle3_tui.engines.model.folder_config import shown

NESTED = "eagle_config.eagle_aux_hidden_state_layer_ids"
TOP = "eagle_aux_hidden_state_layer_ids"

#: a drafter's config.json as read: any JSON object (the rules look up the keys they know)
Config = dict[str, Any]

#: when an engine refuses a drafter: at start-up (its config checks, the model's class, loading the
#: weights, setting the capture up) or at the first forward (the states do not fit the drafter's fc)
FailsAt = Literal["start-up", "first forward"]


class Capture(TypedDict, total=False):
    """What one engine (and range of releases) does with a config: a rule's answer."""

    boundaries: list[int | None]  # per id, in the config's order: b, None when nothing is captured
    states: list[int]  # the distinct boundaries fed to the drafter, in layer order
    fc_states: int | None  # how many states the engine builds the drafter's fc for (None: not read)
    fails: str | None  # the engine refuses this drafter: why
    fails_at: FailsAt | None  # when it refuses it
    graph_states: list[int] | None  # the boundaries CUDA-graph-replayed steps feed, when not `states`
    guessed: bool  # the config pins nothing: the engine's default
    ids: Any  # as the engine read them
    ids_from: str | None  # the config key the ids came from
    why: str
    depends: str | None  # what the answer depends on that the tool cannot know (a flag, a runner)


def nested(config: Config, key: str) -> Any:
    section = config.get("eagle_config")
    return section.get(key) if isinstance(section, dict) else None


def is_id(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def default_capture(L: int) -> list[int]:
    """The guess every engine falls back to: b 2, L//2, L-3 (vLLM and SGLang write it as "input
    of" ids [2, L//2, L-3], TensorRT-LLM and SpecForge as "output of" ids [1, L//2-1, L-4])."""
    return [2, L // 2, L - 3]


def numeric(v: Any) -> bool:
    """What `id + 1` accepts: an int, a float, a bool (True + 1 == 2)."""
    return isinstance(v, (int, float))


def to_b(v: Any, shift: int, lo: int, hi: int) -> int | None:
    """The boundary a capture loop reaches for id v (`i in layers_to_capture` with i an int):
    v + shift when it is a whole number in lo..hi, else None (never equal to a layer index)."""
    # json.loads reads NaN and Infinity too; an int is never either (math.isfinite of a 400-digit
    # one raises OverflowError)
    if not numeric(v) or (isinstance(v, float) and not math.isfinite(v)):
        return None
    b = v + shift
    return int(b) if b == int(b) and lo <= b <= hi else None


def show(v: Any) -> str:
    """A config.json value in a message, as JSON writes it, cut short (folder_config.shown)."""
    return shown(v)


def capture(ids: list[Any], bounds: list[int | None], key: str | None, why: str, *, guessed: bool = False,
            fc: int | None = None, fails: str | None = None, fails_at: FailsAt | None = None,
            depends: str | None = None, graph: list[int] | None = None) -> Capture:
    """A rule's answer. A failure at start-up captures nothing (every boundary None); states that
    do not fit the fc the engine builds fail at the first forward."""
    if fails is not None and fails_at is None:
        fails_at = "start-up"
    if fails_at == "start-up":
        bounds = [None] * len(bounds)
    states = sorted({b for b in bounds if b is not None})
    if fails is None and fc is not None and states and len(states) != fc:
        fails = (f"its fc takes {show(fc)} states and {len(states)} are captured"
                 + (" (equal ids capture one state)" if len(states) < len([b for b in bounds if b is not None]) else "")
                 + ": the shapes do not fit")
        fails_at = "first forward"
    return {"boundaries": bounds, "states": [] if fails else states, "fc_states": fc, "fails": fails,
            "fails_at": fails_at if fails else None, "graph_states": graph, "guessed": guessed, "ids": ids,
            "ids_from": key, "why": why, "depends": depends}


def refused(why: str, *, ids: list[Any] | None = None, depends: str | None = None) -> Capture:
    """The engine cannot serve this target or this drafter at all: it fails at start-up and
    captures nothing."""
    return capture(list(ids or []), [None] * len(ids or []), None, why, fails=why, depends=depends)


def guess(L: int, who: str, written: list[int], *, fc: int | None = 3, why: str | None = None,
          depends: str | None = None) -> Capture:
    return capture(written, list(default_capture(L)), None,
                   why or f"the drafter names no ids {who} reads: {who}'s default {written}",
                   guessed=True, fc=fc, depends=depends)


_NONE = object()


def plus_one(raw: Any) -> tuple[list[Any] | None, str | None]:
    """`[val + 1 for val in layer_ids]`: the values, or why it raises (a string or dict is
    iterated, a number is not iterable, a non-number cannot take + 1)."""
    if isinstance(raw, (int, float)):
        return None, f"{show(raw)} is not a list: `for val in layer_ids` raises TypeError"
    try:
        values = list(raw)
    except TypeError:
        return None, f"{show(raw)} is not a list: `for val in layer_ids` raises TypeError"
    bad = next((v for v in values if not numeric(v)), _NONE)
    if bad is not _NONE:
        return None, f"id {show(bad)}: `id + 1` raises TypeError"
    return values, None


def fc_nested(config: Config) -> int:
    """vLLM 0.22.0+ llama_eagle3.py 179-190 and SGLang 0.5.12+ llama_eagle3.py 154-158: fc takes
    num_aux_hidden_states, else len(eagle_config ids) when they are truthy, else 3 states."""
    n = config.get("num_aux_hidden_states")
    if isinstance(n, int) and not isinstance(n, bool):
        return n
    ids = nested(config, "eagle_aux_hidden_state_layer_ids")
    try:
        return len(ids) if ids else 3
    except TypeError:
        return 3


def bset(bounds: Sequence[int | None], L: int) -> str:
    """Boundaries as the JSON holds them, in its order: "?" for null, "post" for L + 1."""
    return ", ".join("?" if b is None else "post" if b == L + 1 else str(b) for b in bounds)


def captured(states: Sequence[int | None], L: int) -> str:
    """What an engine captures, in words: "b 2, 16, 29", or "nothing"."""
    return f"b {bset(states, L)}" if states else "nothing"
