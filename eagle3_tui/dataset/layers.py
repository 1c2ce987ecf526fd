"""`scan --model`: which boundary each slot of a dataset holds, for each group of files.

The scan's records say that a run of files departs from the rest (`layer_group`), not which
layers either side holds. Running the target model on every file would answer that at a forward
pass per file; a handful of representatives answers it for the whole dataset:

    picks = choose(records, findings)                  # at most MAX_IDENTIFY files, deterministic
    results = await identify_picks(source, root, picks, model=..., drafter=..., on_progress=...)
    entries, extra = report(picks, results)            # the JSON "layers", findings to add
    text = format_layers(entries, model)               # the text report's section

Representatives: one file of the majority (the files no layer_group finding names), one of each
layer_group finding, and, when the majority spans few shards, one of each of its other shards (a
re-run too small or too alike for the statistic to split off still holds other boundaries). A
file is chosen only when it is a sample with no NaN/Inf, in the majority's layout, named by no
other warning or error finding, first in natural path order among those with MIN_TOKENS valid
tokens. Identification goes through Source.identify: in this process for a local dataset, in the
agent on the box for an SSH one, where the model is.

Plain Python (no Textual); torch is only imported by identify itself.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from eagle3_tui.dataset.ahead import Ahead, source_parallel
from eagle3_tui.dataset.shapes import DatasetRecord, LayerFinal, LayersEntry, LayerSlot, Pick, Reading, VerifyPlan
from eagle3_tui.dataset.verify import verdicts, verify_picks
from eagle3_tui.engines.finding_codes import raised_by
from eagle3_tui.engines.results.findings import Finding, finding
from eagle3_tui.engines.results.identify import ConventionReading, IdentifyResult
from eagle3_tui.sources.base import Source, natural_key

#: identify calls per scan (each is a forward pass of the target model on one sample)
MAX_IDENTIFY = 8
#: a representative should have at least this many valid tokens (fewer: the best there is)
MIN_TOKENS = 16
#: the model runs on at most this many tokens of a representative (a causal prefix: same states)
IDENTIFY_TOKENS = 512
#: records decoded while looking for a majority representative before taking the best seen
LOOK_AT = 400

#: identify's findings carried over to the dataset, each to its group: about the states, not the
#: convention (engines/finding_codes.py: raised by identify and scan --model)
_LIFTED = frozenset(raised_by("identify", "scan --model"))
_READ = {"output": "output of layer", "input": "input of layer", "hf_hidden_states": "HF hidden_states[k]"}


# ------------------------------------------------------------------------------ choosing files


def decoded(record: DatasetRecord) -> DatasetRecord:
    """A record as engines/scan/records.py wrote it (a lazy cached one carries its JSON text in "raw")."""
    if "raw" not in record:
        return record
    full: DatasetRecord = {**json.loads(record["raw"]), "path": record["path"]}
    return full


def usable(r: DatasetRecord) -> bool:
    if "error" in r or not r.get("slots"):
        return False
    final = r.get("final")
    parts = [*r["slots"], *([final] if final else [])]
    return not any(p.get("nan") or p.get("inf") for p in parts) and (r.get("valid_tokens") or 0) > 0


def _first_usable(records: list[DatasetRecord], look_at: int | None = None) -> DatasetRecord | None:
    """The first usable record (natural path order) with MIN_TOKENS valid tokens, else the
    usable one with the most; records are decoded one at a time, and at most `look_at`."""
    best = None
    for r in sorted(records, key=lambda r: natural_key(r["path"]))[:look_at]:
        r = decoded(r)
        if not usable(r):
            continue
        if r["valid_tokens"] >= MIN_TOKENS:
            return r
        if best is None or r["valid_tokens"] > best["valid_tokens"]:
            best = r
    return best


def grouped_and_flagged(findings: list[Finding]) -> tuple[set[str], set[str]]:
    """(the files a layer_group finding names, the files another warning or error names: a
    layout_mismatch among them; those are never chosen to represent a group)."""
    in_group = {p for f in findings if f.get("code") == "layer_group" for p in f.get("paths") or []}
    flagged = {p for f in findings if f.get("severity") in ("error", "warning") and f.get("code") != "layer_group"
               for p in f.get("paths") or []}
    return in_group, flagged


def choose(records: list[DatasetRecord], findings: list[Finding], limit: int = MAX_IDENTIFY) -> list[Pick]:
    """The files to identify: [{"group": "majority"|"layer_group"|"shard", "label", "path",
    "files", "paths" (the group's files, for findings), "range"}], majority first."""
    groups = [f for f in findings if f.get("code") == "layer_group" and f.get("paths")]
    in_group, flagged = grouped_and_flagged(findings)
    by_path = {r["path"]: r for r in records}
    rest = [r for r in records if r["path"] not in in_group and r["path"] not in flagged]
    picks: list[Pick] = []
    majority = _first_usable(rest, LOOK_AT)
    if majority is not None:
        files = sum("error" not in r for r in records if r["path"] not in in_group)
        picks.append({"group": "majority", "label": "majority", "path": majority["path"], "files": files,
                      "paths": [], "range": None, "shard": majority.get("shard", "")})
    for f in groups[: max(0, limit - len(picks))]:
        members = [by_path[p] for p in f["paths"] if p in by_path and p not in flagged]
        r = _first_usable(members)
        if r is None:
            continue
        span = f.get("range")
        label = f"files {span[0]}..{span[1]}" if span else f"{f['paths'][0]} .. {f['paths'][-1]}"
        picks.append({"group": "layer_group", "label": label, "path": r["path"], "files": len(f["paths"]),
                      "paths": list(f["paths"]), "range": span, "shard": r.get("shard", "")})
    if majority is not None:
        shards: dict[str, list[DatasetRecord]] = defaultdict(list)
        for r in rest:
            if "error" in r:  # a folder of non-samples (a vocab_mapping/) is no shard
                continue
            shards[r["path"].rsplit("/", 1)[0] if "/" in r["path"] else ""].append(r)
        others = sorted((s for s in shards if s != majority.get("shard", "")), key=natural_key)
        if others and len(others) <= limit - len(picks):  # few shards: one file each
            for shard in others:
                r = _first_usable(shards[shard])
                if r is not None:
                    picks.append({"group": "shard", "label": f"shard {shard or '.'}", "path": r["path"],
                                  "files": len(shards[shard]), "paths": [x["path"] for x in shards[shard]],
                                  "range": None, "shard": shard})
    return picks


# ------------------------------------------------------------------------------ identifying


async def identify_picks(
    source: Source, root: str, picks: list[Pick], *, model: str, drafter: str | None = None,
    device: str = "auto", on_progress: Callable[[int, int, str], None] | None = None,
    done: list[IdentifyResult] | None = None,
) -> list[IdentifyResult]:
    """Source.identify of each pick, in order (results are appended to `done` as they come, so a
    cancelled run keeps what it has). A drafter whose config names no layer ids is dropped for
    the rest of the run: the boundaries are still worth having."""

    join = posixpath.join if source.host is not None else os.path.join
    results = done if done is not None else []
    given = drafter
    # a source that runs several at once (scan --ray's actors) gets the next ones started ahead
    ahead = Ahead(lambda i: source.identify(join(root, picks[i]["path"]), model=model, drafter=drafter,
                                            tokens=IDENTIFY_TOKENS, device=device), len(picks), source_parallel(source))
    try:
        for i, pick in enumerate(picks):
            if pick["group"] in ("suspect", "sample") and results and all("error" in r for r in results):
                break  # not one representative could be identified: the model, not the files, is the problem
            if on_progress is not None:
                on_progress(i + 1, len(picks), pick["path"])
            path = join(root, pick["path"])
            r = await ahead.result(i)
            if given is not None and "error" in r and r["error"].startswith(f"drafter {given}"):
                drafter_error, first = r["error"], drafter is not None
                drafter = None  # calls started from now on go without it
                r = await source.identify(path, model=model, tokens=IDENTIFY_TOKENS, device=device)
                if first:
                    r["drafter_error"] = drafter_error
            results.append(r)
    finally:
        ahead.close()
    return results


# ------------------------------------------------------------------------------ the report


def _bounds(result: IdentifyResult) -> list[int | None]:
    """Per slot: the boundary, L + 1 for the final norm's output (conventions.py's way), None."""
    post = result["layers"] + 1
    return [post if s.get("norm") == "post" else s.get("boundary") for s in result["slots"]]


def _reading(bounds: list[int | None], layers: int, table: list[ConventionReading]) -> Reading | None:
    """The layer ids each convention needs to land on these boundaries, and the entries of
    identify's conventions table (the drafter's ids, else the defaults) that give them."""
    known = [b for b in bounds if b is not None]
    if not bounds or len(known) < len(bounds):
        return None
    got = sorted(known)
    return {
        "output_of": [b - 1 for b in got] if got[0] >= 1 and got[-1] <= layers else None,
        "input_of": got if got[-1] <= layers - 1 else None,
        "fits": [{"ids": r["ids"], "ids_from": r["ids_from"], "reading": r["reading"]}
                 for r in table if r["boundaries"] == got],
    }


def plan(records: list[DatasetRecord], findings: list[Finding], *, minority: float = 0.01,
         identify_all: bool = False) -> tuple[list[Pick], VerifyPlan]:
    """(every file to identify: the representatives (choose), then the suspects and the random
    sample that verify the rest (verify.py), the verification plan)."""

    picks = choose(records, findings)
    more, checks = verify_picks(records, findings, {p["path"] for p in picks}, minority=minority,
                                identify_all=identify_all, usable=usable, decoded=decoded)
    return picks + more, checks


def report(picks: list[Pick], results: list[IdentifyResult], drafter: str | None = None,
           checks: VerifyPlan | None = None) -> tuple[list[LayersEntry], list[Finding]]:
    """(one "layers" entry per group identified, findings for the dataset). Picks beyond the
    results (an interrupted run) are left out; `drafter` is the folder identify was given; the
    verified files (suspects, the drawn sample) give findings of their own (verify.py)."""

    entries: list[LayersEntry] = []
    findings: list[Finding] = []
    failed: dict[str, list[str]] = defaultdict(list)
    verified = [(pick, r) for pick, r in zip(picks, results, strict=False) if pick["group"] in ("suspect", "sample")]
    for pick, r in zip(picks, results, strict=False):
        if pick["group"] in ("suspect", "sample"):
            if "error" in r:
                failed[r["error"]].append(pick["path"])
            continue
        entry: LayersEntry = {"group": pick["group"], "label": pick["label"], "files": pick["files"],
                              "range": pick["range"]}
        entry["paths"] = [pick["path"]]
        entry["computed"] = r.get("computed")
        if "error" in r:
            entry["error"] = r["error"]
            failed[r["error"]].append(pick["path"])
            entries.append(entry)
            continue
        layers = r["layers"]
        bounds = _bounds(r)
        conventions = r.get("conventions")
        table: list[ConventionReading] = conventions["readings"] if conventions else []
        final = r.get("final")
        entry["layers"] = layers
        entry["tokens"] = r.get("tokens")
        entry["boundaries"] = bounds
        entry["slots"] = [_layer_slot(s) for s in r["slots"]]
        entry["final"] = _layer_final(final) if final else None
        entry["reading"] = _reading(bounds, layers, table)
        if r.get("drafter_error"):
            entry["drafter"] = {"error": r["drafter_error"]}
        elif drafter and table:  # the table then holds the drafter's ids alone
            reading = entry["reading"]
            fits = [f["reading"] for f in reading["fits"]] if reading else []
            entry["drafter"] = {"ids": table[0]["ids"], "ids_from": table[0]["ids_from"], "follows": fits}
        for f in r.get("findings", []):
            if f["code"] in _LIFTED and f["severity"] != "info":
                findings.append({**f, "message": f"{pick['label']} ({pick['path']}): {f['message']}",
                                 "group": pick["label"], "paths": [pick["path"]]})
        entries.append(entry)
    _compare_with_majority(entries, picks, findings)
    major = entries[0] if entries and entries[0]["group"] == "majority" and "error" not in entries[0] else None
    known = {p for pick in picks if pick["group"] == "layer_group" for p in pick["paths"]}
    findings += verdicts([p for p, _ in verified], [r for _, r in verified], major, checks, known)
    if major is not None:  # the files verified at other boundaries are not the majority's
        major["files"] -= len({p for f in findings if f["code"] == "layer_minority" for p in f["paths"]})
    for error, paths in failed.items():
        findings.append(finding("identify_failed", "warning", f"--model could not identify {_quote(paths)}: {error}", paths=paths))
    return entries, findings


def _layer_slot(s: Mapping[str, Any]) -> LayerSlot:
    """An identified slot as the entry keeps it ("norm" and "fault" only when set)."""
    kept: LayerSlot = {"label": s.get("label"), "boundary": s.get("boundary")}
    if s.get("norm"):
        kept["norm"] = s["norm"]
    kept["status"] = s.get("status")
    kept["cosine"] = s.get("cosine")
    kept["norm_ratio"] = s.get("norm_ratio")
    kept["margin"] = s.get("margin")
    kept["second"] = s.get("second")
    if s.get("fault"):
        kept["fault"] = s["fault"]
    return kept


def _layer_final(f: Mapping[str, Any]) -> LayerFinal:
    return {"norm": f.get("norm"), "boundary": f.get("boundary"), "status": f.get("status"),
            "cosine": f.get("cosine"), "norm_ratio": f.get("norm_ratio")}


def _compare_with_majority(entries: list[LayersEntry], picks: list[Pick], findings: list[Finding]) -> None:
    """Offsets against the majority's boundaries; a shard that holds other boundaries, and a
    group that reads the drafter's ids otherwise than the majority, are warnings."""
    major = entries[0] if entries and entries[0]["group"] == "majority" and "error" not in entries[0] else None
    paths_of = {p["path"]: p["paths"] for p in picks}
    for e in entries:
        if "error" in e:
            continue
        if major is not None and e is not major:
            e["offset"] = _offset(major["boundaries"], e["boundaries"])
            e["same_as_majority"] = e["boundaries"] == major["boundaries"]
            if e["group"] == "shard" and not e["same_as_majority"]:
                findings.append(finding("layer_shard", "warning", f"{e['label']} ({e['paths'][0]}): slots at {_bset(e)}, the majority's at "
                               f"{_bset(major)}{_offset_text(e.get('offset'))}: its files were written with "
                               "other layer ids, though their statistics did not set them apart", group=e["label"], paths=paths_of[e["paths"][0]], boundaries=e["boundaries"]))
        d = e.get("drafter")
        if not d or "follows" not in d:
            continue
        ids = f"{d['ids_from']} {d['ids']}"
        if not d["follows"]:
            e["drafter"]["agrees"] = False
            findings.append(finding("layer_convention", "warning", f"{e['label']} ({e['paths'][0]}): slots at {_bset(e)}, which no reading of the "
                           f"drafter's {ids} gives (output of layer: b = id + 1; input of layer: b = id)", group=e["label"], follows=None, ids=d["ids"], ids_from=d["ids_from"], boundaries=e["boundaries"], paths=paths_of[e["paths"][0]] or e["paths"]))
            continue
        if major is None or e is major or not major.get("drafter", {}).get("follows"):
            e["drafter"]["agrees"] = True
            continue
        theirs = major["drafter"]["follows"]
        agrees = bool(set(d["follows"]) & set(theirs))
        e["drafter"]["agrees"] = agrees
        if not agrees:
            findings.append(finding("layer_convention", "warning", f"{e['label']} ({e['paths'][0]}): slots at {_bset(e)} = the drafter's {ids} read "
                           f"as {_READ[d['follows'][0]]}; the majority's at {_bset(major)} = the same ids read as "
                           f"{_READ[theirs[0]]}: these files were written under the other convention and "
                           "train the drafter on other layers", group=e["label"], follows=d["follows"][0], disagrees=theirs[0], ids=d["ids"], ids_from=d["ids_from"], boundaries=e["boundaries"], paths=paths_of[e["paths"][0]] or e["paths"]))


def _offset(a: list[int | None], b: list[int | None]) -> int | None:
    """How many boundaries deeper (+) or shallower (-) every slot of b is than a's, else None."""
    if len(a) != len(b) or None in a or None in b:
        return None
    diffs = {y - x for x, y in zip(a, b, strict=False) if x is not None and y is not None}
    return diffs.pop() if len(diffs) == 1 else None


def _offset_text(d: int | None) -> str:
    if not d:
        return ""
    n = abs(d)
    return f": {'one' if n == 1 else n} boundar{'y' if n == 1 else 'ies'} {'lower' if d < 0 else 'deeper'}"


def _bset(e: LayersEntry) -> str:
    post = e["layers"] + 1
    return "b " + ", ".join("post-norm" if b == post else "?" if b is None else str(b) for b in e["boundaries"])


def _quote(items: list[str], show: int = 3) -> str:
    return ", ".join(items[:show]) + (f" and {len(items) - show} more" if len(items) > show else "")


# ------------------------------------------------------------------------------ text


def _slot_text(s: LayerSlot) -> str:
    margin = f" margin {s['margin']:.3f}" if s.get("margin") is not None else ""
    cos = "-" if s.get("cosine") is None else f"{s['cosine']:.4f}"
    if s.get("norm") == "post":
        where = "post-norm"
    elif s.get("boundary") is not None:
        where = f"b={s['boundary']}"
    else:
        return f"{s['label']} no match (cos {cos})"
    status = "" if s.get("status") == "match" else f" {s.get('status')}"
    return f"{s['label']} {where}{status} cos {cos}{margin}"


def checked_count(findings: Iterable[Finding]) -> int:
    """How many other files the layers_checked finding says were identified as a check (verify.py)."""
    checks = next((f for f in findings if f["code"] == "layers_checked"), None)
    return int(dict[str, Any](checks).get("checked") or 0) if checks is not None else 0


def layers_head(entries: Sequence[LayersEntry], model: str, planned: int | None = None, checked: int = 0) -> str:
    """The section's first line (the whole section when there is nothing to show per group): what
    each count is. A group's layers are named from one file (choose); `checked` other files were
    identified only to hold them against the majority's boundaries (verify.py, layers_checked)."""
    done = len(entries)
    files = f"{done} file{'s' if done != 1 else ''}"
    if planned is not None and planned > done:
        return f"layers (identified with --model {model} on {files} of {planned} planned, interrupted):" + (
            "" if entries else " none")
    if not entries:
        return (f"layers (identified with --model {model} on 0 files): "
                + ("none" if planned else "no file to identify (no readable sample without NaN/Inf)"))
    head = f"layers (--model {model}): named from {files} identified with the model, one per group (below)"
    if checked:
        head += (f"; {checked} other file{'s' if checked != 1 else ''} identified only to check them "
                 "against the majority's boundaries (layers_checked)")
    return head + ":"


def group_lines(e: LayersEntry) -> list[tuple[str, str]]:
    """One group's lines as (kind, text): "group" (the files, b per slot, statuses, final,
    offset), then "slots" (each slot's numbers), "reading" (the ids that give them), "drafter"."""
    kind = {"majority": "", "layer_group": "layer_group, ", "shard": ""}[e["group"]]
    where = f"{e['label']} ({kind}{e['files']} files; {e['paths'][0]})"
    if "error" in e:
        return [("group", f"{where}: not identified: {e['error']}")]
    bs = e["boundaries"]
    post = e["layers"] + 1
    shown = ", ".join("post-norm" if b == post else "?" if b is None else str(b) for b in bs)
    statuses = sorted({str(s["status"]) for s in e["slots"]})  # identify gives every slot one
    fin = e.get("final")
    final = ""
    if fin:
        final = f", final {fin['norm']}-norm" if fin.get("norm") else ", final unmatched"
    line = f"{where}: b={shown} ({'/'.join(statuses)}){final}"
    if e.get("offset"):
        line += _offset_text(e["offset"]) + " than the majority"
    elif e.get("same_as_majority"):
        line += ": the majority's boundaries"
    lines = [("group", line)]
    lines.append(("slots", " | ".join(_slot_text(s) for s in e["slots"])
                  + (f" | final {fin['norm'] or 'unmatched'} cos {fin['cosine']:.4f}" if fin and fin.get("cosine") is not None else "")))
    rd = e.get("reading")
    if rd:
        ways = []
        if rd["output_of"] is not None:
            ways.append(f"SpecForge's \"output of\" ids {rd['output_of']}")
        if rd["input_of"] is not None:
            ways.append(f"vLLM's \"input of\" ids {rd['input_of']}")
        if ways:
            lines.append(("reading", "read as " + " / ".join(ways)))
    d = e.get("drafter")
    if d and "error" in d:
        lines.append(("drafter", f"drafter: {d['error']}"))
    elif d:
        ids = f"drafter {d['ids_from']} {d['ids']}"
        if not d["follows"]:
            lines.append(("drafter", f"{ids}: no reading gives these boundaries (WARNING)"))
        else:
            text = f"{ids}: read as {_READ[d['follows'][0]]}"
            if d.get("agrees") is False:
                text += ", not as the majority reads them (WARNING)"
            elif e["group"] != "majority":
                text += ", as the majority"
            lines.append(("drafter", text))
    return lines


def format_layers(entries: Sequence[LayersEntry], model: str, planned: int | None = None, checked: int = 0) -> str:
    """The text report's section: one paragraph per group."""
    lines = [layers_head(entries, model, planned, checked)]
    for e in entries:
        lines += [("  " if kind == "group" else "    ") + text for kind, text in group_lines(e)]
    return "\n".join(lines)
