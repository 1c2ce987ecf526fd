"""The table: every engine's releases cut at each of its CHANGES into ranges, each range's rule run
on a drafter's config, and the ranges that then read the drafter alike merged into one row
("SGLang 0.4.9 ≤ v < 0.5.11"). Which rows are in force: the `--engine` version's, else the newest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import eagle3_tui.dataset.serving.sglang as sglang
import eagle3_tui.dataset.serving.specforge as specforge
import eagle3_tui.dataset.serving.tokenspeed as tokenspeed
import eagle3_tui.dataset.serving.trtllm as trtllm
import eagle3_tui.dataset.serving.vllm as vllm
from eagle3_tui.dataset.serving.capture import Capture, Config, show
from eagle3_tui.dataset.serving.versions import key, read_as, within

Rule = Callable[[Config, int, "str | None"], Capture]

#: the engines in the order they are shown; SpecForge is a training reading (not counted in the exit)
MODULES = (vllm, sglang, trtllm, tokenspeed, specforge)
#: engines that take the ids from their own options, never from the drafter's config.json
OWN_OPTION = ("trtllm",)
_VARIANTS = (None, vllm.V1, vllm.V2)


class EngineCapture(Capture, total=False):
    """One engine and range of releases in a check: its rule's answer, where it comes from, and
    whether it captures what the data holds (run sets all but "matches", check that)."""

    engine: str
    since: str | None
    until: str | None  # None: up to the newest release read and on
    variant: str | None  # the runner, where a release has two
    serves: bool  # False: a training reading (not counted in the exit code)
    source: str
    matches: bool
    in_force: bool  # the rules the user runs: the --engine version's, else the newest
    asked: str | None  # the --engine version this row answers
    read_as: str | None  # the release whose rules answer it when that version was not read


class Segment(NamedTuple):
    engine: str
    since: str | None
    until: str | None
    variant: str | None
    serves: bool
    source: str
    rule: Rule


def _bind(module, since: str | None, variant: str | None) -> Rule:
    def rule(config: Config, L: int, arch: str | None) -> Capture:
        return module.rule(config, L, arch, since, variant)
    return rule


def segments(engine: str) -> list[Segment]:
    """An engine's ranges: its releases cut at every change (a range never straddles one)."""
    module = next(m for m in MODULES if m.ENGINE == engine)
    serves = engine != "specforge"
    if not module.RELEASES:
        return [Segment(engine, None, None, None, serves, module.SOURCE, _bind(module, None, None))]
    starts = sorted({c.since for c in module.CHANGES}, key=key)
    out = []
    for i, since in enumerate(starts):
        until = starts[i + 1] if i + 1 < len(starts) else None
        source = "; ".join(c.source for c in module.CHANGES if c.since == since)
        for variant in getattr(module, "variants", lambda _: (None,))(since):
            out.append(Segment(engine, since, until, variant, serves, source, _bind(module, since, variant)))
    return out


def releases(engine: str) -> tuple[str, ...]:
    return next(m.RELEASES for m in MODULES if m.ENGINE == engine)


def read() -> dict[str, dict[str, str]]:
    """The releases read per engine: {"vllm": {"oldest", "newest"}, ...} (engines with releases)."""
    return {m.ENGINE: {"oldest": m.RELEASES[0], "newest": m.RELEASES[-1]} for m in MODULES if m.RELEASES}


def rule_at(engine: str, version: str | None = None, variant: str | None = None) -> Rule:
    """The rule of an engine at a release (and runner, where there are two)."""
    found = [s for s in segments(engine) if version is None or within(version, s.since, s.until)]
    if variant is not None:
        found = [s for s in found if s.variant == variant]
    if len(found) != 1:
        raise ValueError(f"{engine} {version} {variant}: {len(found)} ranges (name the runner)")
    return found[0].rule


def _row(s: Segment, c: Capture, slots: int | None) -> EngineCapture:
    e: EngineCapture = {"engine": s.engine, "since": s.since, "until": s.until, "variant": s.variant, **c,
                        "serves": s.serves, "source": s.source}
    fc = c.get("fc_states")
    if slots is not None and fc is not None and fc != slots and not e.get("fails"):
        e["fails"] = (f"it builds the drafter's fc for {show(fc)} states; a drafter trained on the data's {slots} "
                      "slots does not load into it (the fc weight's shape)")
        e["fails_at"], e["boundaries"], e["states"] = "start-up", [None] * len(c["boundaries"]), []
    return e


def _alike(a: EngineCapture, b: EngineCapture) -> bool:
    fields = ("boundaries", "states", "fc_states", "fails", "fails_at", "guessed", "ids_from", "depends",
              "graph_states")
    return all(a.get(f) == b.get(f) for f in fields) and repr(a.get("ids")) == repr(b.get("ids"))


def _merged(rows: list[EngineCapture]) -> list[EngineCapture]:
    out: list[EngineCapture] = []
    for e in rows:
        last = out[-1] if out else None
        if last is not None and last["variant"] == e["variant"] and last["until"] == e["since"] and _alike(last, e):
            sources = last["source"].split("; ") + [x for x in e["source"].split("; ") if x not in last["source"]]
            out[-1] = {**e, "since": last["since"], "source": "; ".join(sources)}
        else:
            out.append(e)
    return out


def run(config: Config, L: int, arch: str | None, slots: int | None = None,
        asked: dict[str, str | None] | None = None) -> list[EngineCapture]:
    """Every engine's rows for this drafter and target (only the asked engines' with `asked`, and
    of those only the rows of the version asked); with `slots` (the data's), an engine whose fc is
    built for another count fails to load the drafter (its fc was trained on the data's slots)."""
    out: list[EngineCapture] = []
    for module in MODULES:
        engine = module.ENGINE
        if asked is not None and engine not in asked:
            continue
        segs = sorted(segments(engine), key=lambda s: (_VARIANTS.index(s.variant), key(s.since or "0")))
        rows = _merged([_row(s, s.rule(config, L, arch), slots) for s in segs])
        version = asked.get(engine) if asked else None
        for e in rows:
            e["in_force"] = e["until"] is None
        if version is not None:
            rows = _at(rows, engine, version)
        out += rows
    return out


def _at(rows: list[EngineCapture], engine: str, version: str) -> list[EngineCapture]:
    """The rows of the version asked, each saying so (and which release answers it when the
    version was not read)."""
    instead = read_as(version, releases(engine))
    picked = [e for e in rows if within(instead or version, e["since"], e["until"])]
    for e in picked:
        e["in_force"], e["asked"], e["read_as"] = True, version, instead
    return picked


def in_force(asked: dict[str, str | None] | None = None) -> list[Segment]:
    """The segments whose rules the user runs, for the fix: per serving engine that reads the
    drafter's config.json, those of the version asked, else the newest."""
    out = []
    for module in MODULES:
        engine = module.ENGINE
        if engine in OWN_OPTION or engine == "specforge" or (asked is not None and engine not in asked):
            continue
        version = asked.get(engine) if asked else None
        segs = segments(engine)
        if version is None:
            out += [s for s in segs if s.until is None]
        else:
            at = read_as(version, module.RELEASES) or version
            out += [s for s in segs if within(at, s.since, s.until)]
    return out
