"""Layer-id conventions: which boundaries a list of layer ids lands on under each reading.

Boundary index b (FORMATS.md): 0 is the embedding output, b = i + 1 the output of decoder layer
i, b = L the last residual before the final norm. Producers read the same "layer ids" as:

  - output of layer id  (SpecForge, SGLang explicit ids, speculators legacy capture): b = id + 1
  - input of layer id   (vLLM, SGLang default list, EAGLE-3 reference code):          b = id
  - HF hidden_states[k] (ModelOpt's HF dump, hand-written hooks):  b = k, except k = L, which is
    after the final norm

The ids come from the drafter's config.json when one is given; without it, from the defaults of
the producer the file's schema names (ModelOpt's, speculators', vLLM's FP8 connector's: see
PRODUCER_DEFAULTS), then from the two defaults that both land on the common capture
b = {2, L//2, L-3}: SpecForge's [1, L//2-1, L-4] (output of) and vLLM's [2, L//2, L-3] (input
of). Where two producers' ids coincide, the one that wrote the file is named.

Standard library only: shipped to the remote box with the rest of engines/.
"""

from __future__ import annotations

import os
from typing import Any

from eagle3_tui.engines.model.folder_config import (  # noqa: F401 - the reader's names, re-exported for callers
    ConfigError,
    layer_ids,
    read_json,
    text_config,
)
from eagle3_tui.engines.results.findings import Finding, Severity, finding
from eagle3_tui.engines.results.identify import ConventionReading, Conventions, PairExplanation

READINGS = (
    ("output", "output of layer id (SpecForge, SGLang explicit ids, speculators legacy): b = id + 1", 1),
    ("input", "input of layer id (vLLM, SGLang default list, EAGLE-3 reference): b = id", 0),
)

# Where drafters keep their ids, most specific first: (path of keys, what to call it)
ID_KEYS = (
    (("eagle_config", "eagle_aux_hidden_state_layer_ids"), "eagle_config.eagle_aux_hidden_state_layer_ids"),
    (("eagle_aux_hidden_state_layer_ids",), "eagle_aux_hidden_state_layer_ids"),
    (("aux_hidden_state_layer_ids",), "aux_hidden_state_layer_ids"),
    (("target_layer_ids",), "target_layer_ids"),
    (("dflash_config", "target_layer_ids"), "dflash_config.target_layer_ids"),
)


def num_layers(config: dict[str, Any]) -> int | None:
    n = text_config(config).get("num_hidden_layers")
    return n if isinstance(n, int) and n > 0 else None


def drafter_layer_ids(folder: str) -> tuple[list[int], str]:
    """(layer ids, the config key they came from) of a drafter folder; ConfigError when none."""
    path = os.path.join(folder, "config.json") if os.path.isdir(folder) else folder
    config = read_json(path, f"drafter {folder}")
    for keys, name in ID_KEYS:
        value: Any = config
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            return layer_ids(f"drafter {folder}", name, value), name
    raise ConfigError(
        f"drafter {folder}: config.json names no layer ids (looked for "
        + ", ".join(name for _, name in ID_KEYS) + ")"
    )


#: schema (engines/read/schema.py) -> (the default ids its producer captures at, given L; their name),
#: from the producers' save code (FORMATS.md):
#:  - ModelOpt's HF dump: aux layer ids sorted({1, L//2-1, L-4}), read as output of layer;
#:  - speculators' current files are written by vLLM's capture: [2, L//2, L-3], input of layer;
#:  - speculators' FP8 connector (vLLM): [2, L//2, L-3] (and L for the final residual), input of.
PRODUCER_DEFAULTS = {
    "ModelOpt offline": (lambda L: sorted({1, L // 2 - 1, L - 4}), "ModelOpt default ids"),
    "speculators": (lambda L: [2, L // 2, L - 3], "speculators default ids (vLLM's capture)"),
    "speculators (FP8)": (lambda L: [2, L // 2, L - 3], "vLLM default ids (speculators' FP8 connector)"),
}


def default_id_sets(layers: int, schema: str | None = None) -> list[tuple[list[int], str]]:
    """The id sets tried without a drafter: the file's producer's first (when its schema names
    one), then SpecForge's and vLLM's defaults."""
    L = layers
    sets = [
        ([1, L // 2 - 1, L - 4], "SpecForge default ids"),
        ([2, L // 2, L - 3], "vLLM default ids"),
    ]
    producer = PRODUCER_DEFAULTS.get(schema or "")
    if producer is not None:
        ids, name = producer
        sets.insert(0, (ids(L), name))
    return sets


def expected_boundaries(ids: list[int], shift: int) -> list[int]:
    return sorted(i + shift for i in ids)


def convention_finding(
    identified: list[int | None], layers: int, drafter: tuple[list[int], str] | None,
    schema: str | None = None,
) -> tuple[Conventions, list[Finding]]:
    """(the `conventions` block of the result, findings) for the slots' identified boundaries.

    `identified` holds one boundary per slot in file order (None: the slot matched none; L + 1:
    the final norm's output, shown as "post"). `schema`: the file's, whose producer's default
    ids are named first (PRODUCER_DEFAULTS).
    """
    id_sets = [drafter] if drafter is not None else default_id_sets(layers, schema)
    table: list[ConventionReading] = []
    for ids, source in id_sets:
        for key, text, shift in READINGS:
            table.append({"ids": ids, "ids_from": source, "reading": key, "describe": text,
                          "boundaries": expected_boundaries(ids, shift)})
        # HF hidden_states[k]: the same numbers as "input of", except k = L is post-norm (L + 1 here)
        hf = sorted(layers + 1 if i == layers else i for i in ids)
        table.append({"ids": ids, "ids_from": source, "reading": "hf_hidden_states",
                      "describe": "HF hidden_states[k]: b = k (k = L is after the final norm)",
                      "boundaries": hf})
    block: Conventions = {"layers": layers, "readings": table}
    known = [b for b in identified if b is not None]
    if not known:
        return block, []
    got = sorted(known)
    complete = len(known) == len(identified)
    follows = [r for r in table if r["boundaries"] == got and complete]
    findings: list[Finding] = []
    got_text = _set(got, layers)

    def show(r: ConventionReading) -> str:
        return f"{r['ids_from']} {r['ids']} read as {_short(r['reading'])} give b {_set(r['boundaries'], layers)}"

    if follows:
        # "input" and HF hidden_states give the same numbers: name the first that fits
        r = follows[0]
        others = [o for o in table if o["ids_from"] == r["ids_from"] and o["boundaries"] != got]
        severity: Severity = "info"
        text = f"slots at b {got_text}: {show(r)}"
        if drafter is None:
            default = [2, layers // 2, layers - 3]
            if got != default:
                severity = "warning"
                text += f"; the common default capture is b {_set(default, layers)}"
        if others:
            text += f"; read as {_short(others[0]['reading'])} they would be b {_set(others[0]['boundaries'], layers)}"
        findings.append(finding("layer_convention", severity, text,
                                follows=r["reading"], ids=r["ids"], ids_from=r["ids_from"],
                                disagrees=others[0]["reading"] if others else None))
        return block, findings
    # mixed: every slot fits some reading of the same ids, but no single reading fits them all
    for ids, source in id_sets:
        readings = [r for r in table if r["ids_from"] == source and r["reading"] != "hf_hidden_states"]
        per_slot = []
        for b in identified:
            fits = [_short(r["reading"]) for r in readings if b is not None and b in r["boundaries"]]
            per_slot.append(fits)
        if complete and all(per_slot) and len({f[0] for f in per_slot}) > 1:
            parts = ", ".join(f"b={b} ({' or '.join(f)})" for b, f in zip(identified, per_slot))
            findings.append(finding(
                "layer_convention", "warning",
                f"slots at b {got_text} mix readings of {source} {ids}: {parts}; "
                "one part of the ids was read under the other convention (ids nested in "
                "a config section that one engine ignores, or two settings)",
                follows="mixed", ids=ids, ids_from=source, disagrees=None,
            ))
            return block, findings
    readings_text = "; ".join(show(r) for r in table if r["reading"] != "hf_hidden_states")
    missing = "" if complete else f" ({len(identified) - len(known)} slot(s) matched no boundary)"
    findings.append(finding(
        "layer_convention", "warning",
        f"slots at b {got_text}{missing} follow no reading of the layer ids: {readings_text}",
        follows=None, ids=id_sets[0][0], ids_from=id_sets[0][1], disagrees=None,
    ))
    return block, findings


def _short(reading: str) -> str:
    return {"output": "output of layer", "input": "input of layer",
            "hf_hidden_states": "HF hidden_states[k]"}.get(reading, reading)


def _set(bs: list[int], layers: int) -> str:
    return "{" + ", ".join("post" if b == layers + 1 else str(b) for b in bs) + "}"


_READ_AS = {"output": "the output of the layer", "input": "the input of the layer",
            "hf_hidden_states": "HF hidden_states[k]"}


def explain_pair(
    a: list[int | None], b: list[int | None], layers: int, drafter: tuple[list[int], str] | None
) -> PairExplanation | None:
    """Why two captures sit at different boundaries, when one set of layer ids explains both:
    A's boundaries are one reading of the ids and B's another (compare --model). None when
    no id set (the drafter's, else the two defaults) fits both sides."""
    got_a, got_b = sorted(x for x in a if x is not None), sorted(x for x in b if x is not None)
    if not a or not b or len(got_a) < len(a) or len(got_b) < len(b) or got_a == got_b:
        return None
    block, _ = convention_finding(list(a), layers, drafter)
    seen: list[str] = []
    for r in block["readings"]:
        if r["ids_from"] not in seen:
            seen.append(r["ids_from"])
    for source in seen:
        readings = [r for r in block["readings"] if r["ids_from"] == source]
        fits_a = [r["reading"] for r in readings if r["boundaries"] == got_a]
        fits_b = [r["reading"] for r in readings if r["boundaries"] == got_b]
        if fits_a and fits_b and not set(fits_a) & set(fits_b):
            ra, rb = fits_a[0], fits_b[0]
            ids = readings[0]["ids"]
            if {ra, rb} == {"output", "input"}:
                side_out, side_in = ("B's", "A's") if rb == "output" else ("A's", "B's")
                how = f"the output of the layer on {side_out} side and its input on {side_in}"
            else:
                how = f"{_READ_AS[rb]} on B's side and {_READ_AS[ra]} on A's"
            message = (f"layer ids read as {how} ({source} {ids}: A b {_set(got_a, layers)} = {_short(ra)}, "
                       f"B b {_set(got_b, layers)} = {_short(rb)})")
            return {"ids": ids, "ids_from": source, "a": ra, "b": rb, "message": message}
    return None
