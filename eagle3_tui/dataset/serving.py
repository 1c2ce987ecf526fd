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

from eagle3_tui.dataset.serving_rules import (
    ENGINES,
    INCLUSIVE,
    NESTED,
    NORM_BEFORE_FC,
    TOP,
    Capture,
    Config,
    Range,
    is_id,
    nested,
)
from eagle3_tui.dataset.shapes import LayersEntry
from eagle3_tui.engines.model.folder_config import shown
from eagle3_tui.engines.results import Finding, Severity, finding
from eagle3_tui.names import printable

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
    boundaries: list[int | None]  # the majority's (check: in layer order)
    slots: list[int | None]  # check: the majority's in the files' slot order
    files: int | None
    groups: list[ServingGroup]  # the groups whose boundaries differ
    arch: str | None


class EngineCapture(Capture, total=False):
    """One engine (and version range) in a check: its rule's answer, where it comes from, and
    whether it captures what the data holds (run_rules sets all but "matches", check that)."""

    engine: str
    since: str | None
    until: str | None  # None: the engine's current rule
    variant: str | None  # the runner, when a range has two
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
    """Boundaries as the JSON holds them, in its order: "?" for null, "post" for L + 1."""
    return ", ".join("?" if b is None else "post" if b == L + 1 else str(b) for b in bounds)


def _versions(since: str | None, until: str | None) -> str:
    if until in INCLUSIVE:
        return f"through {until}"
    start = f"after {since}" if since in INCLUSIVE else since
    if since and until:
        return f"{start} .. {until}"
    return (f"{start}" if since in INCLUSIVE else f"since {since}") if since else f"before {until}" if until else "all"


def label(e: EngineCapture) -> str:
    name = f"{NAMES[e['engine']]} {_versions(e['since'], e['until'])}" if e["since"] or e["until"] else NAMES[e["engine"]]
    return f"{name}, {e['variant']}" if e.get("variant") else name


def _offset(got: list[int], want: list[int | None]) -> str:
    if len(got) != len(want):
        return f"{len(got)} states for {len(want)} slots"
    if None in want:
        return "some slots are unidentified"
    d = {g - w for g, w in zip(got, sorted(_known(want)), strict=False)}
    if len(d) == 1:
        n = d.pop()
        word = "shallower" if n < 0 else "deeper"
        return f"every slot {abs(n)} boundar{'y' if abs(n) == 1 else 'ies'} {word}"
    return "the slots move by different amounts"


def _known(bounds: Sequence[int | None]) -> list[int]:
    return [b for b in bounds if b is not None]


def run_rules(config: Config, L: int, arch: str | None, slots: int | None = None) -> list[EngineCapture]:
    """Every range's rule; with `slots` (the data's), an engine whose fc is built for another
    count fails to load the drafter (its fc was trained on the data's slots)."""
    out: list[EngineCapture] = []
    for r in ENGINES:
        c = r["rule"](config, L, arch)
        e: EngineCapture = {"engine": r["engine"], "since": r["since"], "until": r["until"], "variant": r["variant"],
                            **c, "serves": r["serves"], "source": r["source"]}
        fc = c.get("fc_states")
        if slots is not None and fc is not None and fc != slots and not e.get("fails"):
            e["fails"] = (f"it builds the drafter's fc for {_show(fc)} states; a drafter trained on the data's {slots} "
                          "slots does not load into it")
            e["states"] = []
        out.append(e)
    return out


def _matches(e: EngineCapture, want: list[int | None]) -> bool:
    return not e.get("fails") and None not in want and e["states"] == sorted(_known(want))


def check(config: Config, data: ServingData, arch: str | None = None) -> ServingCheck:
    """The whole answer: {"data", "drafter", "engines", "findings", "fix"}."""
    L = data["layers"]
    slots = list(data["boundaries"])  # in the files' order
    want = sorted(slots, key=_key)  # engines feed the states in layer order
    engines = run_rules(config, L, arch, len(slots))
    for e in engines:
        e["matches"] = _matches(e, want)
    findings = (_id_findings(config, engines, L) + _engine_findings(engines, want, L)
                + _input_findings(config, data, L, engines))
    fix = None
    # a fix when a current engine misses, fails or only guesses (a norm or an order warning is not
    # one config.json ids can fix)
    if any(not e["matches"] or (e["guessed"] and e["engine"] not in OWN_OPTION)
           for e in engines if e["until"] is None and e["serves"]):
        fix = find_fix(config, want, L, arch)
    if fix is not None:
        findings.append(finding("serving_fix", "info", fix["message"], lines=fix["lines"]))
    drafter: DrafterIds = {"ids": nested(config, "eagle_aux_hidden_state_layer_ids"), "top_level_ids": config.get(TOP),
                           "norm_before_fc": _norm_before_fc(config), "architectures": config.get("architectures")}
    return {"data": {**data, "boundaries": want, "slots": slots, "arch": arch}, "drafter": drafter,
            "engines": engines, "findings": findings, "fix": fix}


def bad_ids(value: Any) -> list[str]:
    """What is wrong with an ids value as config.json holds it: each problem, naming the value."""
    if value is None:
        return []
    if not isinstance(value, list):
        return [f"{_show(value)} is not a list"]
    if not value:
        return ["an empty list"]
    odd = [v for v in value if not is_id(v)]
    out = [f"{_show(v)} is not an integer" for v in odd[:3]] + ([f"{len(odd) - 3} more are not"] if len(odd) > 3 else [])
    seen = [v for v in value if is_id(v)]
    dup = sorted({v for v in seen if seen.count(v) > 1})
    if dup:
        out.append(f"{', '.join(map(_show, dup[:3]))}{f' and {len(dup) - 3} more' if len(dup) > 3 else ''} "
                   "named more than once (the engines capture one state for it)")
    return out


def _show(v: Any) -> str:
    """A config.json value in a message, as JSON writes it, cut short (a 10,000-character string
    or a 4,000-digit number stays a short line)."""
    return shown(v)


def _id_findings(config: Config, engines: list[EngineCapture], L: int) -> list[Finding]:
    """Ids that are not a list of distinct integers: an error, naming the value and what each
    engine does with it (the engines' own code decides: a float goes through id + 1, a string
    does not)."""
    out: list[Finding] = []
    for key, value in ((NESTED, nested(config, "eagle_aux_hidden_state_layer_ids")), (TOP, config.get(TOP))):
        problems = bad_ids(value)
        if not problems:
            continue
        said = "; ".join(problems)
        parts = []
        for e in engines:
            if e["until"] is not None:
                continue
            if e.get("ids_from") == key:
                got = f"b {bset(e['boundaries'], L)}" if e["boundaries"] else "nothing"
                parts.append(f"{label(e)} fails ({e['fails']})" if e.get("fails") else f"{label(e)} captures {got}")
        unread = [label(e) for e in engines if e["until"] is None and e.get("ids_from") != key]
        msg = f"{key} {_show(value)}: {said}. " + ("; ".join(parts) or "no current engine reads it as written")
        if unread:
            msg += f"; {', '.join(unread)}: not from this key (their default, their own option or another key)"
        out.append(finding("serving_bad_ids", "error", msg, key=key, value=value))
    return out


def _engine_findings(engines: list[EngineCapture], want: list[int | None], L: int) -> list[Finding]:
    out: list[Finding] = []
    held = bset(want, L)
    for e in engines:
        current = e["until"] is None
        where = {"engine": e["engine"], "since": e["since"], "until": e["until"], "variant": e.get("variant")}
        severity: Severity = "warning" if current and e["serves"] else "info"
        if e.get("fails"):
            verb = "will fail" if current else "would fail"
            if not e["serves"]:
                verb = "refuses to train" if current else "refused to train"
            out.append(finding("serving_fails", severity, f"{label(e)} {verb} on this drafter: {e['fails']} ({e['why']})",
                               **where))
        elif not e["matches"]:
            verb = "will capture" if current else "would capture"
            if not e["serves"]:
                verb = "trains on" if current else "trained on"
            out.append(finding("serving_mismatch", severity,
                               f"{label(e)} {verb} b {bset(e['states'], L)}; the data holds b {held}: "
                               f"{_offset(e['states'], want)} ({e['why']})", **where))
        elif e["guessed"] and current and e["serves"]:
            # an engine that never reads config.json (TensorRT-LLM) cannot be pinned by the drafter:
            # its own option is named in the fix, the guess itself is no fault of this pairing
            out.append(finding("serving_guessed", "info" if e["engine"] in OWN_OPTION else "warning",
                               f"{label(e)} guesses b {bset(e['boundaries'], L)}: it matches the data today, but the "
                               f"drafter does not pin it and another version may guess otherwise ({e['why']})",
                               **where))
    return out


def _norm_before_fc(config: Config) -> bool:
    v = nested(config, "norm_before_fc")
    return bool(config.get("norm_before_fc") if v is None else v)


def _norm_findings(config: Config) -> list[Finding]:
    """norm_before_fc: who applies it from where it is written, who ignores it (NORM_BEFORE_FC)."""
    keys = {"top": bool(config.get("norm_before_fc")), "nested": bool(nested(config, "norm_before_fc"))}
    if not any(keys.values()):
        return []
    written = " and ".join(k for k, v in (("the top level", keys["top"]), ("eagle_config", keys["nested"])) if v)
    applies = [f"{who} {when}".strip() for who, when, reads, _ in NORM_BEFORE_FC if any(keys[k] for k in reads)]
    ignores = [f"{who} {when}".strip() + f" (reads only {'eagle_config' if reads == ('nested',) else 'the top level'})"
               for who, when, reads, _ in NORM_BEFORE_FC if not any(keys[k] for k in reads)]
    current_ignore = [i for i in ignores if not i.startswith("vLLM 0.18.0")]
    msg = (f"the drafter sets norm_before_fc in {written} (an RMSNorm over the concatenated aux states before fc): "
           f"applied by {', '.join(applies) or 'no engine'}")
    if ignores:
        msg += (f"; ignored by {', '.join(ignores)}: fed without it, acceptance drops though the layers match "
                "(written both at the top level and in eagle_config, every reader applies it)")
    msg += "; vLLM before 0.18.0 and SGLang before 0.5.17 never apply it"
    return [finding("serving_norm_before_fc", "warning" if current_ignore else "info", msg)]


def _fc_counts(engines: list[EngineCapture], slots: int) -> Finding | None:
    """Issue 42 item 10: each current engine's fc size next to the data's slot count."""
    current = [e for e in engines if e["until"] is None and e.get("fc_states") is not None]
    if all(e["fc_states"] == slots for e in current):
        return None
    counts = "; ".join(f"{label(e)} {_show(e['fc_states'])}" for e in current)
    return finding("serving_slot_count", "warning",
                   f"the data holds {slots} slots; the drafter's fc takes, per engine: {counts} (vLLM and SGLang: "
                   "num_aux_hidden_states or the count of eagle_config ids, else 3; tokenspeed: the count of top-level "
                   "ids, else 3; TensorRT-LLM: the option's count, else 3; SpecForge: exactly 3)")


def _input_findings(config: Config, data: ServingData, L: int, engines: list[EngineCapture] | None = None) -> list[Finding]:
    """What the drafter takes besides aux layers: post-norm states, norm_before_fc, slot counts
    and order, the speculators format."""
    out: list[Finding] = []
    slots = data["boundaries"]
    want = sorted(slots, key=_key)
    if L + 1 in slots:
        out.append(finding("serving_post_norm", "warning",
                           f"slot {slots.index(L + 1)} of the data holds the final post-norm state (after the final "
                           "norm): vLLM, SGLang and tokenspeed capture residual streams, b = L at most, before the "
                           "final norm; TensorRT-LLM's eagle3_layers_to_capture {-1} (its default with "
                           "eagle3_model_arch=\"mistral_large3\") is read as that state, but how -1 is captured was not "
                           "in the stored index: unverified"))
    if None in slots:
        out.append(finding("serving_unidentified", "warning",
                           f"{slots.count(None)} slot(s) of the data matched no boundary: no engine can be checked "
                           "against them"))
    known = _known(slots)
    if len(known) == len(slots) and known != sorted(known):
        out.append(finding("serving_slot_order", "warning",
                           f"the data stores its slots as b {bset(slots, L)}; every engine concatenates the states in "
                           f"ascending layer order (b {bset(want, L)}): the drafter is fed its slots in another order "
                           "than it was trained on"))
    out += _norm_findings(config)
    if engines is not None and (fc := _fc_counts(engines, len(slots))) is not None:
        out.append(fc)
    if nested(config, "use_aux_hidden_state") is False:
        out.append(finding("serving_no_aux", "error",
                           "eagle_config.use_aux_hidden_state is false: vLLM and SGLang feed the drafter the target's "
                           "last hidden state, not aux layers (tokenspeed does not read the key), while the data holds "
                           f"{len(slots)} aux slots: the drafter and its data disagree"))
    if "speculators_model_type" in config:
        out.append(finding("serving_speculators", "warning",
                           "a speculators-format config: vLLM reads it (transformers_utils/configs/speculators, "
                           "top-level ids kept); SGLang and tokenspeed have no reader for the format"))
    for g in data.get("groups") or []:
        out.append(finding("serving_minority", "warning",
                           f"{g['label']} ({g.get('files')} files) holds b {bset(g['boundaries'], L)}, the majority "
                           f"b {bset(want, L)}: no config serves both; the check is against the majority"))
    return out


# ------------------------------------------------------------------------------ the fix

#: the target architectures a fix is tried on when --model's config.json names none: one per rule
#: that reads the ids differently
PROBE_ARCHS = ("LlamaForCausalLM", "DeepseekV3ForCausalLM", "GptOssForCausalLM", "Gemma3ForCausalLM",
               "Qwen3MoeForCausalLM", "KimiK3ForConditionalGeneration")


def _with(config: Config, top: list[int] | None, nest: list[int] | None) -> Config:
    c = dict(config)
    if top is not None:
        c[TOP] = top
    if nest is not None:
        section = c.get("eagle_config")
        c["eagle_config"] = {**(section if isinstance(section, dict) else {}), TOP: nest}
    return c


def _serves(cfg: Config, L: int, arch: str | None, B: list[int], r: Range) -> bool:
    got = r["rule"](cfg, L, arch)
    fc = got.get("fc_states")
    return (not got.get("fails") and not got["guessed"] and got.get("states") == B
            and (fc is None or fc == len(B)))


def _captures(cfg: Config, L: int, arch: str | None, B: list[int], r: Range) -> bool:
    """An older range: captures B without failing, pinned or guessed (it may ignore the ids)."""
    got = r["rule"](cfg, L, arch)
    return not got.get("fails") and got.get("states") == B


def find_fix(config: Config, want: list[int | None], L: int, arch: str | None) -> ServingFix:
    """The fewest config.json lines that make every current engine that reads config.json capture
    the data's boundaries, each candidate run through every current rule (tried: the top-level and
    the eagle_config ids, as b and as b - 1), and TensorRT-LLM's own option. Without the target's
    architecture, the lines are tried on one target per rule and the message says where they
    differ; the older ranges that read the lines otherwise are named."""
    if None in want or L + 1 in want:
        return {"lines": [], "message": "no ids can make an engine capture what the data holds (a slot is post-norm "
                                        "or unidentified)"}
    B = sorted(set(_known(want)))
    choices = _choices(B)
    current = [r for r in ENGINES if r["until"] is None and r["serves"] and r["engine"] not in OWN_OPTION]
    archs = [arch] if arch else [None, *PROBE_ARCHS]
    tries: list[tuple[list[int] | None, list[int] | None]] = [
        *[(t, None) for t in choices], *[(None, n) for n in choices], *product(choices, choices)]
    # an engine no ids can help (a target without aux states, a format it cannot read) is set aside
    hopeless = {r["engine"] for r in current
                if not any(_serves(_with(config, t, n), L, archs[0], B, r) for t, n in tries)}

    def served(cfg: Config, a: str | None) -> list[str]:
        return [r["engine"] for r in current if r["engine"] not in hopeless and _serves(cfg, L, a, B, r)]

    wanted = len(current) - len(hopeless)
    scored = [(len(served(_with(config, t, n), archs[0])), -(t is not None) - (n is not None), i)
              for i, (t, n) in enumerate(tries)]
    top_score = max(scored)
    best = tries[top_score[2]] if top_score[0] > 0 else None
    lines: list[str] = []
    if best is not None:
        top, nest = best
        if top is not None:
            lines.append(f'config.json: "{TOP}": {top}  (top level)')
        if nest is not None:
            lines.append(f'config.json: "eagle_config": {{"{TOP}": {nest}}}')
        fixed = _with(config, top, nest)
        made = served(fixed, archs[0])
        names = _names(made)
        if len(made) == wanted:
            what = "this line makes" if len(lines) == 1 else "no single line can; these make"
            message = f"{what} the current {names} capture b {bset(B, L)}: " + "; ".join(lines)
        else:
            left = _names([r["engine"] for r in current if r["engine"] not in made and r["engine"] not in hopeless])
            message = (f"no config.json ids (tried as b and b - 1 per slot, top level and in eagle_config) make every "
                       f"current engine capture b {bset(B, L)}: they read the ids under different rules; "
                       f"{'this line makes' if len(lines) == 1 else 'these make'} {names} capture it, not {left}: "
                       + "; ".join(lines))
        if not arch:
            other = [a for a in PROBE_ARCHS if served(fixed, a) != made]
            message += (" (checked without the target's architecture: --model's config.json names none"
                        + (f"; on {', '.join(other)} the engines read them otherwise)" if other else
                           "; the same on every architecture the rules tell apart)"))
        old = [r for r in ENGINES if r["until"] is not None and r["serves"] and not _captures(fixed, L, arch, B, r)]
        if old:
            message += ("; older versions read them otherwise: " + ", ".join(label(_as_capture(r)) for r in old)
                        + " (the tool cannot know which version serves)")
    else:
        message = (f"no config.json ids (tried as b and b - 1 per slot, top level and in eagle_config) make vLLM, "
                   f"SGLang or tokenspeed capture b {bset(B, L)}" + (f" on {arch}" if arch else ""))
    if hopeless:
        message += f"; no ids help {_names(sorted(hopeless))} here (see its row)"
    message += "; tokenspeed's server flag --eagle3-layers-to-capture, when given, replaces the drafter's ids"
    if min(B) >= 1 and max(B) <= L:
        trt = f"TensorRT-LLM (LLM API options): speculative_config.eagle3_layers_to_capture: {[b - 1 for b in B]}"
        lines.append(trt)
        message += f"; {trt} (it does not read config.json)"
    return {"lines": lines, "message": message,
            "single": best is not None and sum(x is not None for x in best) == 1 and len(served(
                _with(config, *best), archs[0])) == wanted}


def _names(engines: list[str]) -> str:
    names = [NAMES[e] for e in dict.fromkeys(engines)]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def _choices(B: list[int]) -> list[list[int]]:
    """Ids to try for boundaries B: all as b, all as b - 1, then (up to 4 slots) each slot either way."""
    out = [B, [b - 1 for b in B]]
    if len(B) <= 4:
        out += [list(c) for c in product(*[(b, b - 1) for b in B])]
    seen: list[list[int]] = []
    for c in out:
        if min(c) >= 0 and c not in seen:
            seen.append(c)
    return seen


def _as_capture(r: Range) -> EngineCapture:
    return {"engine": r["engine"], "since": r["since"], "until": r["until"], "variant": r["variant"]}


# ------------------------------------------------------------------------------ text


def current_bad(result: ServingCheck) -> list[EngineCapture]:
    """The current serving rules that do not capture what the data holds (the exit code's)."""
    return [e for e in result["engines"] if e["until"] is None and e["serves"] and not e["matches"]]


def verdict(result: ServingCheck) -> str:
    """One line: which current engines will not serve the drafter right, or that all will."""
    held = bset(result["data"]["boundaries"], result["data"]["layers"])
    errors = [f for f in result["findings"] if f["severity"] == "error"]
    bad = current_bad(result)
    parts = []
    failing = [e for e in bad if e.get("fails")]
    differing = [e for e in bad if not e.get("fails")]
    if failing:
        parts.append(f"{', '.join(map(label, failing))} will fail on this drafter")
    if differing:
        parts.append(f"{', '.join(map(label, differing))} will not capture the data's b {held}")
    if errors and not parts:
        parts.append(f"error: {errors[0]['message']}")
    if parts:
        return printable("serve-check: " + "; ".join(parts), message=True)
    warned = any(f["severity"] == "warning" for f in result["findings"])
    return f"serve-check: every current engine captures the data's b {held}" + (
        " (see the warnings)" if warned else "; nothing to fix")


def mark(e: EngineCapture) -> str:
    """The row's verdict: "ok", "ok, guess", "differs", "fails"."""
    if e.get("fails"):
        return "fails"
    if e["matches"]:
        return "ok, guess" if e["guessed"] else "ok"
    return "differs"


def table_rows(result: ServingCheck) -> list[tuple[str, str, str, str]]:
    """(verdict, engine and versions, what it captures, why) per engine, each cell one line (its
    values escaped: a config.json string cannot break the table)."""
    L = result["data"]["layers"]
    rows: list[tuple[str, str, str, str]] = []
    for e in result["engines"]:
        got = "b " + bset(e["boundaries"], L) if e["boundaries"] else "nothing"
        rows.append((mark(e), label(e), got, printable(e["why"], message=True)))
    return rows


def _value(v: Any) -> str:
    """A config.json value on one line, as JSON writes it (so a string shows its quotes)."""
    return printable(_show(v), message=True) if v is not None else "none"


def format_check(result: ServingCheck) -> str:
    """The report: the verdict and the fix first, the data and the drafter, one aligned line per
    engine and version range, the findings. Real lines; only the values in them are escaped."""
    d = result["data"]
    L = d["layers"]
    arch = d.get("arch")
    lines = [verdict(result)]
    fix = result["fix"]
    if fix is not None:
        lines += [printable(f"fix: {line}", message=True) for line in fix["lines"] or [fix["message"]]]
    lines.append("")
    files = f", {d['files']} files" if d.get("files") else ""
    lines.append(printable(f"data:    b {bset(d['boundaries'], L)} (majority{files}, L = {L}"
                           f"{', ' + arch if arch else ''})", message=True))
    for g in d.get("groups") or []:
        lines.append(printable(f"         {g['label']}: b {bset(g['boundaries'], L)}", message=True))
    dr = result["drafter"]
    lines.append(f"drafter: {NESTED} {_value(dr['ids'])}; top-level {TOP} {_value(dr['top_level_ids'])}"
                 + ("; norm_before_fc" if dr["norm_before_fc"] else ""))
    lines.append("")
    head = ("verdict", "engine and versions", "captures", "why")
    rows = [head, *table_rows(result)]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)) + "  " + row[3])
    lines.append("")
    if result["findings"]:
        lines.append("findings:")
        lines += [printable(f"  {f['severity'].upper():7} {f['code']}: {f['message']}", message=True)
                  for f in result["findings"]]
    else:
        lines.append("findings: none")
    return "\n".join(lines)


def exit_code(result: ServingCheck) -> int:
    """0 when every current serving rule matches, 1 when one does not or the drafter's ids are
    not ids at all (an error finding)."""
    return 1 if current_bad(result) or any(f["severity"] == "error" for f in result["findings"]) else 0
