"""The findings of a check: ids that are not ids, each engine row that misses, fails, guesses or
replays other layers from its CUDA graphs, and what the drafter takes besides aux layers."""

from __future__ import annotations

from typing import Any

from eagle3_tui.dataset.serving.capture import NESTED, TOP, Config, bset, captured, is_id, nested, show
from eagle3_tui.dataset.serving.norm import norm_findings
from eagle3_tui.dataset.serving.result import ServingData, key_of, known
from eagle3_tui.dataset.serving.table import OWN_OPTION, EngineCapture
from eagle3_tui.dataset.serving.versions import label
from eagle3_tui.engines.results.findings import Finding, Severity, finding


def bad_ids(value: Any) -> list[str]:
    """What is wrong with an ids value as config.json holds it: each problem, naming the value."""
    if value is None:
        return []
    if not isinstance(value, list):
        return [f"{show(value)} is not a list"]
    if not value:
        return ["an empty list"]
    odd = [v for v in value if not is_id(v)]
    out = [f"{show(v)} is not an integer" for v in odd[:3]] + ([f"{len(odd) - 3} more are not"] if len(odd) > 3 else [])
    seen = [v for v in value if is_id(v)]
    dup = sorted({v for v in seen if seen.count(v) > 1})
    if dup:
        out.append(f"{', '.join(map(show, dup[:3]))}{f' and {len(dup) - 3} more' if len(dup) > 3 else ''} "
                   "named more than once (the engines capture one state for it)")
    return out


def id_findings(config: Config, engines: list[EngineCapture], L: int) -> list[Finding]:
    """Ids that are not a list of distinct integers: an error, naming the value and what each
    engine in force does with it (the engines' own code decides: a float goes through id + 1, a
    string does not)."""
    out: list[Finding] = []
    for key, value in ((NESTED, nested(config, "eagle_aux_hidden_state_layer_ids")), (TOP, config.get(TOP))):
        problems = bad_ids(value)
        if not problems:
            continue
        parts = [f"{label(e)} fails at {e.get('fails_at') or 'start-up'} ({e['fails']})" if e.get("fails") else
                 f"{label(e)} captures {captured(e['boundaries'], L) if e['boundaries'] else 'nothing'}"
                 for e in engines if e.get("in_force") and e.get("ids_from") == key]
        unread = [label(e) for e in engines if e.get("in_force") and e.get("ids_from") != key]
        msg = f"{key} {show(value)}: {'; '.join(problems)}. " + ("; ".join(parts) or "no engine in force reads it")
        if unread:
            msg += f"; {', '.join(unread)}: not from this key (their default, their own option or another key)"
        out.append(finding("serving_bad_ids", "error", msg, key=key, value=value))
    return out


def _offset(got: list[int], want: list[int | None]) -> str:
    if len(got) != len(want):
        return f"{len(got)} states for {len(want)} slots"
    if None in want:
        return "some slots are unidentified"
    d = {g - w for g, w in zip(got, sorted(known(want)), strict=False)}
    if len(d) == 1:
        n = d.pop()
        word = "shallower" if n < 0 else "deeper"
        return f"every slot {abs(n)} boundar{'y' if abs(n) == 1 else 'ies'} {word}"
    return "the slots move by different amounts"


def _reason(e: EngineCapture) -> str:
    return "" if e["why"] == e.get("fails") else f" ({e['why']})"


def engine_findings(engines: list[EngineCapture], want: list[int | None], L: int) -> list[Finding]:
    out: list[Finding] = []
    held = bset(want, L)
    for e in engines:
        now = bool(e.get("in_force"))
        where = {"engine": e["engine"], "since": e["since"], "until": e["until"], "variant": e.get("variant")}
        severity: Severity = "warning" if now and e["serves"] else "info"
        if e.get("fails"):
            verb = ("will fail" if now else "would fail") if e["serves"] else \
                ("refuses to train" if now else "refused to train")
            out.append(finding("serving_fails", severity, f"{label(e)} {verb} at {e.get('fails_at') or 'start-up'}: "
                               f"{e['fails']}{_reason(e)}", **where))
            continue
        if e.get("graph_states"):
            out.append(_graph_finding(e, severity, L, where))
        if not e["matches"] and e["states"] != sorted(known(want)):
            verb = ("will capture" if now else "would capture") if e["serves"] else ("trains on" if now else "trained on")
            out.append(finding("serving_mismatch", severity,
                               f"{label(e)} {verb} {captured(e['states'], L)}; the data holds b {held}: "
                               f"{_offset(e['states'], want)}{_reason(e)}", **where))
        elif e["guessed"] and now and e["serves"]:
            # an engine that never reads config.json (TensorRT-LLM) cannot be pinned by the drafter:
            # its own option is named in the fix, the guess itself is no fault of this pairing
            out.append(finding("serving_guessed", "info" if e["engine"] in OWN_OPTION else "warning",
                               f"{label(e)} guesses b {bset(e['boundaries'], L)}: it matches the data, but the "
                               f"drafter does not pin it and another version may guess otherwise ({e['why']})",
                               **where))
    return out


def _graph_finding(e: EngineCapture, severity: Severity, L: int, where: dict[str, Any]) -> Finding:
    graph = bset(e["graph_states"] or [], L)
    return finding("serving_cuda_graph", severity,
                   f"{label(e)} records its CUDA graphs with its default layers (b {graph}) before it sets the "
                   f"drafter's ({captured(e['states'], L)}): the graph-replayed steps (decode and verify batches "
                   f"the graphs cover) feed b {graph}, the prefill {captured(e['states'], L)}. Only with CUDA graphs "
                   "on (the default): --disable-cuda-graph feeds the drafter's layers everywhere "
                   "(cuda_graph_runner.py 297-298 and model_runner.py 314, 341 @ 0.4.9; fixed in 0.5.11, "
                   "model_runner.py 764 and 814-822)", graph=e["graph_states"], **where)


def _fc_counts(engines: list[EngineCapture], slots: int) -> Finding | None:
    """Each engine in force's fc size next to the data's slot count."""
    now = [e for e in engines if e.get("in_force") and e.get("fc_states") is not None]
    if all(e["fc_states"] == slots for e in now):
        return None
    counts = "; ".join(f"{label(e)} {show(e['fc_states'])}" for e in now)
    return finding("serving_slot_count", "warning",
                   f"the data holds {slots} slots; the drafter's fc takes, per engine: {counts} (vLLM from 0.22.0 "
                   "and SGLang from 0.5.12: num_aux_hidden_states or the count of eagle_config ids, else 3, before "
                   "them 3; tokenspeed: the count of top-level ids, else 3; TensorRT-LLM: the option's count, else 3; "
                   "SpecForge: exactly 3)")


def input_findings(config: Config, data: ServingData, L: int, engines: list[EngineCapture]) -> list[Finding]:
    """What the drafter takes besides aux layers: post-norm states, norm_before_fc, slot counts
    and order, the speculators format, use_aux_hidden_state, the groups no config serves."""
    out: list[Finding] = []
    slots = data["boundaries"]
    want = sorted(slots, key=key_of)
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
    if len(known(slots)) == len(slots) and known(slots) != sorted(known(slots)):
        out.append(finding("serving_slot_order", "warning",
                           f"the data stores its slots as b {bset(slots, L)}; every engine concatenates the states in "
                           f"ascending layer order (b {bset(want, L)}): the drafter is fed its slots in another order "
                           "than it was trained on"))
    out += norm_findings(config)
    if (fc := _fc_counts(engines, len(slots))) is not None:
        out.append(fc)
    if nested(config, "use_aux_hidden_state") is False:
        out.append(finding("serving_no_aux", "error",
                           "eagle_config.use_aux_hidden_state is false: vLLM from 0.12.0 and SGLang from 0.5.8 feed "
                           "the drafter the target's last hidden state, not aux layers (tokenspeed does not read the "
                           f"key), while the data holds {len(slots)} aux slots: the drafter and its data disagree"))
    if "speculators_model_type" in config:
        out.append(finding("serving_speculators", "warning",
                           "a speculators-format config: vLLM reads it (transformers_utils/configs/speculators, "
                           "top-level ids kept); SGLang and tokenspeed have no reader for the format"))
    for g in data.get("groups") or []:
        out.append(finding("serving_minority", "warning",
                           f"{g['label']} ({g.get('files')} files) holds b {bset(g['boundaries'], L)}, the majority "
                           f"b {bset(want, L)}: no config serves both; the check is against the majority"))
    return out
