"""The check: the dataset's boundaries (scan --model's layers) against what each engine row
captures for the drafter, the findings, the fix, and the exit code."""

from __future__ import annotations

from collections.abc import Sequence

from eagle3_tui.dataset.serving.capture import TOP, Config, nested
from eagle3_tui.dataset.serving.findings import engine_findings, id_findings, input_findings
from eagle3_tui.dataset.serving.fix import find_fix
from eagle3_tui.dataset.serving.norm import norm_before_fc
from eagle3_tui.dataset.serving.result import DrafterIds, ServingCheck, ServingData, ServingGroup, key_of, known
from eagle3_tui.dataset.serving.table import OWN_OPTION, EngineCapture, read, run
from eagle3_tui.dataset.shapes import LayersEntry
from eagle3_tui.engines.results.findings import finding


def data_from_layers(entries: Sequence[LayersEntry]) -> ServingData | None:
    """{"layers": L, "boundaries": the majority's per slot (file order; L + 1 = post-norm, None =
    unmatched), "groups": [{"label", "files", "boundaries"}] of the groups that differ}; None when
    the majority was not identified."""
    major = next((e for e in entries if e.get("group") == "majority" and "error" not in e), None)
    if major is None:
        return None
    groups: list[ServingGroup] = [{"label": e["label"], "files": e.get("files"), "boundaries": e["boundaries"]}
              for e in entries if e is not major and "error" not in e and e.get("group") in ("layer_group", "shard")
              and sorted(map(key_of, e["boundaries"])) != sorted(map(key_of, major["boundaries"]))]
    return {"layers": major["layers"], "boundaries": major["boundaries"], "files": major.get("files"),
            "groups": groups}


def _matches(e: EngineCapture, want: list[int | None]) -> bool:
    B = sorted(known(want))
    return (not e.get("fails") and None not in want and e["states"] == B
            and (not e.get("graph_states") or e["graph_states"] == B))


def check(config: Config, data: ServingData, arch: str | None = None,
          asked: dict[str, str | None] | None = None) -> ServingCheck:
    """The whole answer: {"data", "drafter", "engines", "findings", "fix", "read", "asked"}; with
    `asked` ({engine: version}, serve-check --engine) only those engines, at those versions."""
    L = data["layers"]
    slots = list(data["boundaries"])  # in the files' order
    want = sorted(slots, key=key_of)  # engines feed the states in layer order
    engines = run(config, L, arch, len(slots), asked)
    for e in engines:
        e["matches"] = _matches(e, want)
    findings = id_findings(config, engines, L) + engine_findings(engines, want, L) + input_findings(
        config, data, L, engines)
    fix = None
    # a fix when an engine in force misses, fails or only guesses, or the drafter turns its aux
    # states off (a norm or an order warning is not one config.json ids can fix)
    if nested(config, "use_aux_hidden_state") is False or any(
            not e["matches"] or (e["guessed"] and e["engine"] not in OWN_OPTION)
            for e in engines if e.get("in_force") and e["serves"]):
        fix = find_fix(config, want, L, arch, asked)
    if fix is not None:
        findings.append(finding("serving_fix", "info", fix["message"], lines=fix["lines"]))
    drafter: DrafterIds = {"ids": nested(config, "eagle_aux_hidden_state_layer_ids"), "top_level_ids": config.get(TOP),
                           "norm_before_fc": norm_before_fc(config), "architectures": config.get("architectures")}
    return {"data": {**data, "boundaries": want, "slots": slots, "arch": arch}, "drafter": drafter,
            "engines": engines, "findings": findings, "fix": fix, "read": read(), "asked": asked}


def in_force_bad(result: ServingCheck) -> list[EngineCapture]:
    """The serving rows in force that do not capture what the data holds (the exit code's)."""
    return [e for e in result["engines"] if e.get("in_force") and e["serves"] and not e["matches"]]


def exit_code(result: ServingCheck) -> int:
    """0 when every serving row in force matches, 1 when one does not or the drafter's ids are not
    ids at all (an error finding)."""
    return 1 if in_force_bad(result) or any(f["severity"] == "error" for f in result["findings"]) else 0
