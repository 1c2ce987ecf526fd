"""Will it serve right? The boundaries each serving engine (and version range) will capture for a
drafter's config.json, against the boundaries the dataset holds (`scan --model`'s layers).

    data = data_from_layers(layers_entries)            # the majority's boundaries, the other groups
    result = check(drafter_config, data, arch="LlamaForCausalLM")
    text = format_check(result)                        # the table, the findings, the fix

The rules are in serving_rules.py (one per engine and version range, each from the engine's own
code, cited in docs/serving.md). Plain Python (no Textual, no torch).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from typing import Any, TypedDict

from eagle3_tui.dataset.serving_rules import ENGINES, NESTED, NORM_BEFORE_FC, TOP, Capture, Config, nested
from eagle3_tui.dataset.shapes import LayersEntry
from eagle3_tui.engines.results import Finding, Severity, finding

#: engines that take the ids from their own options, never from the drafter's config.json
OWN_OPTION = ("trtllm",)
NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "tokenspeed": "tokenspeed",
         "specforge": "SpecForge"}


class ServingGroup(TypedDict):
    label: str
    files: int | None
    boundaries: list[int | None]


class ServingData(TypedDict, total=False):
    """The dataset's side of a check (data_from_layers; check adds "arch")."""

    layers: int
    boundaries: list[int | None]  # the majority's, per slot
    files: int | None
    groups: list[ServingGroup]  # the groups whose boundaries differ
    arch: str | None


class EngineCapture(Capture, total=False):
    """One engine (and version range) in a check: its rule's answer, where it comes from, and
    whether it captures what the data holds (run_rules sets all but "matches", check that)."""

    engine: str
    since: str | None
    until: str | None  # None: the engine's current rule
    serves: bool  # False: a training reading (not counted in the exit code)
    source: str
    matches: bool


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


def data_from_layers(entries: Sequence[LayersEntry]) -> ServingData | None:
    """{"layers": L, "boundaries": the majority's per slot (file order; L + 1 = post-norm, None =
    unmatched), "groups": [{"label", "files", "boundaries"}] of the groups that differ}; None when
    the majority was not identified."""
    major = next((e for e in entries if e.get("group") == "majority" and "error" not in e), None)
    if major is None:
        return None
    groups: list[ServingGroup] = [{"label": e["label"], "files": e.get("files"), "boundaries": e["boundaries"]}
              for e in entries if e is not major and "error" not in e and e.get("group") in ("layer_group", "shard")
              and sorted(map(_key, e["boundaries"])) != sorted(map(_key, major["boundaries"]))]
    return {"layers": major["layers"], "boundaries": major["boundaries"], "files": major.get("files"),
            "groups": groups}


def _key(b: int | None) -> int:
    return -1 if b is None else b


def bset(bounds: Sequence[int | None], L: int) -> str:
    return ", ".join("?" if b is None else "post" if b == L + 1 else str(b) for b in sorted(bounds, key=_key))


def _versions(since: str | None, until: str | None) -> str:
    if since and until:
        return f"{since} .. {until}"
    return f"since {since}" if since else f"before {until}" if until else "all"


def label(e: EngineCapture) -> str:
    return f"{NAMES[e['engine']]} {_versions(e['since'], e['until'])}" if e["since"] or e["until"] else NAMES[e["engine"]]


def _offset(got: list[int | None], want: list[int | None]) -> str:
    if len(got) != len(want):
        return f"{len(got)} states for {len(want)} slots"
    if None in got or None in want:
        return "some ids capture nothing"
    d = {g - w for g, w in zip(sorted(_known(got)), sorted(_known(want)), strict=False)}
    if len(d) == 1:
        n = d.pop()
        word = "shallower" if n < 0 else "deeper"
        return f"every slot {abs(n)} boundar{'y' if abs(n) == 1 else 'ies'} {word}"
    return "the slots move by different amounts"


def _known(bounds: list[int | None]) -> list[int]:
    """The boundaries that are known (callers have checked that every one is)."""
    return [b for b in bounds if b is not None]


def run_rules(config: Config, L: int, arch: str | None) -> list[EngineCapture]:
    out: list[EngineCapture] = []
    for engine, since, until, rule, serves, source in ENGINES:
        r = rule(config, L, arch)
        out.append({"engine": engine, "since": since, "until": until, **r, "serves": serves, "source": source})
    return out


def check(config: Config, data: ServingData, arch: str | None = None) -> ServingCheck:
    """The whole answer: {"data", "drafter", "engines", "findings", "fix"}."""
    L = data["layers"]
    want = [b for b in data["boundaries"]]
    engines = run_rules(config, L, arch)
    for e in engines:
        e["matches"] = None not in e["boundaries"] and None not in want and sorted(_known(e["boundaries"])) == sorted(_known(want))
    findings = _engine_findings(engines, want, L) + _input_findings(config, data, L)
    fix = find_fix(config, want, L, arch) if any(f["severity"] == "warning" for f in findings) else None
    if fix is not None:
        findings.append(finding("serving_fix", "info", fix["message"], lines=fix["lines"]))
    drafter: DrafterIds = {"ids": nested(config, "eagle_aux_hidden_state_layer_ids"), "top_level_ids": config.get(TOP),
               "norm_before_fc": _norm_before_fc(config), "architectures": config.get("architectures")}
    return {"data": {**data, "boundaries": sorted(want, key=_key), "arch": arch}, "drafter": drafter,
            "engines": engines, "findings": findings, "fix": fix}


def _engine_findings(engines: list[EngineCapture], want: list[int | None], L: int) -> list[Finding]:
    out: list[Finding] = []
    held = bset(want, L)
    for e in engines:
        current = e["until"] is None
        if not e["matches"]:
            severity: Severity = "warning" if current and e["serves"] else "info"
            verb = "will capture" if current else "would capture"
            if not e["serves"]:
                verb = "trains on" if current else "trained on"
            out.append(finding("serving_mismatch", severity,
                               f"{label(e)} {verb} b {bset(e['boundaries'], L)}; the data holds b {held}: "
                               f"{_offset(e['boundaries'], want)} ({e['why']})",
                               engine=e["engine"], since=e["since"], until=e["until"]))
        elif e["guessed"] and current and e["serves"]:
            # an engine that never reads config.json (TensorRT-LLM) cannot be pinned by the drafter:
            # its own option is named in the fix, the guess itself is no fault of this pairing
            out.append(finding("serving_guessed", "info" if e["engine"] in OWN_OPTION else "warning",
                               f"{label(e)} guesses b {bset(e['boundaries'], L)}: it matches the data today, but the "
                               f"drafter does not pin it and another version may guess otherwise ({e['why']})",
                               engine=e["engine"], since=e["since"], until=e["until"]))
    return out


def _norm_before_fc(config: Config) -> bool:
    v = nested(config, "norm_before_fc")
    return bool(config.get("norm_before_fc") if v is None else v)


def _input_findings(config: Config, data: ServingData, L: int) -> list[Finding]:
    """What the drafter takes besides aux layers: post-norm states, norm_before_fc, slot counts."""
    out: list[Finding] = []
    want = data["boundaries"]
    if L + 1 in want:
        out.append(finding("serving_post_norm", "warning",
                           f"slot {want.index(L + 1)} of the data holds the final post-norm state (after the final "
                           "norm): no engine's aux capture yields it (each captures residual streams, b = L at "
                           "most, before the final norm)"))
    if None in want:
        out.append(finding("serving_unidentified", "warning",
                           f"{want.count(None)} slot(s) of the data matched no boundary: no engine can be checked "
                           "against them"))
    if _norm_before_fc(config):
        out.append(finding("serving_norm_before_fc", "warning",
                           "the drafter sets norm_before_fc (an RMSNorm over the concatenated aux states before fc): "
                           "applied by " + ", ".join(NORM_BEFORE_FC.values()) + "; TensorRT-LLM: unverified; older "
                           "versions feed the states without it and acceptance drops though the layers match"))
    ids = nested(config, "eagle_aux_hidden_state_layer_ids") or config.get(TOP)
    if isinstance(ids, list) and ids and len(ids) != len(want):
        out.append(finding("serving_slot_count", "warning",
                           f"the drafter names {len(ids)} layer ids; the data holds {len(want)} slots: its fc takes "
                           f"{len(ids)} states"))
    elif not ids and len(want) != 3:
        out.append(finding("serving_slot_count", "warning",
                           f"the data holds {len(want)} slots; a drafter without ids gets the engines' 3 default "
                           "states"))
    if nested(config, "use_aux_hidden_state") is False:
        out.append(finding("serving_no_aux", "warning",
                           "eagle_config.use_aux_hidden_state is false: the drafter takes the target's last hidden "
                           "state, not aux layers"))
    for g in data.get("groups") or []:
        out.append(finding("serving_minority", "warning",
                           f"{g['label']} ({g.get('files')} files) holds b {bset(g['boundaries'], L)}, the majority "
                           f"b {bset(want, L)}: no config serves both; the check is against the majority"))
    return out


# ------------------------------------------------------------------------------ the fix


def _with(config: Config, top: list[int] | None, nest: list[int] | None) -> Config:
    c = dict(config)
    if top is not None:
        c[TOP] = top
    if nest is not None:
        section = c.get("eagle_config")
        c["eagle_config"] = {**(section if isinstance(section, dict) else {}), TOP: nest}
    return c


def find_fix(config: Config, want: list[int | None], L: int, arch: str | None) -> ServingFix:
    """The fewest config.json lines that make every current engine that reads config.json capture
    the data's boundaries (tried: the top-level and the eagle_config ids, as b and as b - 1), and
    TensorRT-LLM's own option. {"lines": [...], "message": ...}."""
    if None in want or L + 1 in want:
        return {"lines": [], "message": "no ids can make an engine capture what the data holds (a slot is post-norm "
                                        "or unidentified)"}
    B = sorted(_known(want))  # every one known: checked above
    choices = [c for c in (B, [b - 1 for b in B]) if min(c) >= 0]
    reads = [(e, s, u, r) for e, s, u, r, serves, _ in ENGINES if u is None and serves and e not in OWN_OPTION]

    def ok(cfg: Config) -> bool:
        return all(sorted(r(cfg, L, arch)["boundaries"], key=_key) == B and not r(cfg, L, arch)["guessed"]
                   for _e, _s, _u, r in reads)

    best: tuple[list[int] | None, list[int] | None] | None = None
    tries: list[tuple[list[int] | None, list[int] | None]] = [
        *[(t, None) for t in choices], *[(None, n) for n in choices], *product(choices, choices)]
    for top, nest in tries:
        if ok(_with(config, top, nest)):
            best = (top, nest)
            break
    lines: list[str] = []
    if best is not None:
        top, nest = best
        if top is not None:
            lines.append(f'config.json: "{TOP}": {top}  (top level)')
        if nest is not None:
            lines.append(f'config.json: "eagle_config": {{"{TOP}": {nest}}}')
        what = "this line makes" if len(lines) == 1 else "no single line can; these make"
        message = f"{what} vLLM, SGLang and tokenspeed capture b {bset(B, L)}: " + "; ".join(lines)
    else:
        message = (f"no config.json ids (tried as b and as b - 1, top level and in eagle_config) make vLLM, SGLang "
                   f"and tokenspeed all capture b {bset(B, L)}"
                   + (f" on {arch}" if arch else "") + ": they read the ids under different rules")
    if min(B) >= 1 and max(B) <= L:
        trt = f"TensorRT-LLM (LLM API options): speculative_config.eagle3_layers_to_capture: {[b - 1 for b in B]}"
        lines.append(trt)
        message += f"; {trt} (it does not read config.json)"
    return {"lines": lines, "message": message, "single": best is not None and sum(x is not None for x in best) == 1}


# ------------------------------------------------------------------------------ text


def table_rows(result: ServingCheck) -> list[tuple[str, str, str, str]]:
    """(engine and versions, what it captures, "=" / "differs", why) per engine."""
    L = result["data"]["layers"]
    rows: list[tuple[str, str, str, str]] = []
    for e in result["engines"]:
        mark = ("= guessed" if e["guessed"] else "=") if e["matches"] else "differs"
        rows.append((label(e), "b " + bset(e["boundaries"], L), mark, e["why"]))
    return rows


def format_check(result: ServingCheck) -> str:
    d = result["data"]
    L = d["layers"]
    arch = d.get("arch")
    lines = [f"data: b {bset(d['boundaries'], L)} (majority{', %s files' % d['files'] if d.get('files') else ''}, "
             f"L = {L}{', ' + arch if arch else ''})"]
    for g in d.get("groups") or []:
        lines.append(f"      {g['label']}: b {bset(g['boundaries'], L)}")
    dr = result["drafter"]
    lines.append(f"drafter: {NESTED} {dr['ids']}, top-level {TOP} {dr['top_level_ids']}"
                 + (", norm_before_fc" if dr["norm_before_fc"] else ""))
    lines.append("")
    rows = table_rows(result)
    w = max(len(r[0]) for r in rows)
    c = max(len(r[1]) for r in rows)
    for name, got, mark, why in rows:
        lines.append(f"{name:<{w}}  {got:<{c}}  {mark:<9}  {why}")
    lines.append("")
    if result["findings"]:
        lines.append("findings:")
        lines += [f"  {f['severity'].upper():7} {f['code']}: {f['message']}" for f in result["findings"]]
    else:
        lines.append("findings: none")
    return "\n".join(lines)


def exit_code(result: ServingCheck) -> int:
    """0 when every current serving rule matches, 1 when one does not."""
    return 1 if any(e["until"] is None and e["serves"] and not e["matches"] for e in result["engines"]) else 0
