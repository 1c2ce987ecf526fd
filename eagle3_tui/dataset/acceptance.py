"""`scan --accept`: what acceptance each group of files costs, on a bounded sample of each.

`scan --drafter` scores every file inside the scan (a drafter pass per file); this step scores a
few files per group after the findings, so its cost does not grow with the dataset:

    plan = choose_files(records, findings, per_group=4)   # groups of layers.choose, <= MAX_ACCEPT files
    results = await score(source, root, plan, drafter=..., model=..., on_progress=..., done=[])
    entries, extra = report(plan, results, drafter)       # the JSON "acceptance", findings to add
    text = format_acceptance(entries, drafter, planned)   # the text report's section

Groups are layers.choose's: the majority, each layer_group finding, each other shard when there
are few. Each group's files are its representative (the file `scan --model` identifies) and files
spread evenly along the group in natural path order, each the first usable one (layers' rule: a
sample with no NaN/Inf, valid tokens, named by no other warning) at or after its even spot. The
majority's files exclude the shards reported on their own, so groups never share a file.

A group whose mean step-1 top-1 is more than MIN_DROP below the majority's is the warning
`group_low_acceptance` with the group's paths. Scoring goes through Source.accept: in this
process for a local dataset, in the agent on the box for an SSH one.

Plain Python (no Textual); torch is only imported by accept itself.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence

from eagle3_tui.dataset.ahead import Ahead, source_parallel
from eagle3_tui.dataset.layers import choose, decoded, grouped_and_flagged, usable
from eagle3_tui.dataset.shapes import AcceptanceEntry, AcceptGroup, AcceptScore, DatasetRecord
from eagle3_tui.engines.model.accept_words import TARGETS
from eagle3_tui.engines.results.accept import AcceptResult
from eagle3_tui.engines.results.errors import error_result
from eagle3_tui.engines.results.findings import Finding, finding
from eagle3_tui.engines.scan.agreement import MIN_GAP
from eagle3_tui.engines.scan.options import ACCEPT_FILES  # noqa: F401 - files scored per group, the representative included
from eagle3_tui.sources.base import Source, SourceError, natural_key

#: Source.accept calls per scan (each is a drafter pass over one file)
MAX_ACCEPT = 32
#: drafting steps scored per file (τ is over these)
STEPS = 3
#: a group whose mean step-1 top-1 is more than this below the majority's is a warning: the
#: per-file yardstick of scan --drafter (15 points); a mean over a few files is steadier than one file
MIN_DROP = MIN_GAP
#: records looked at past an even spot for a usable file before the spot is given up
LOOK_AHEAD = 50


class DrafterUnusable(SourceError):
    """The drafter (or its --model) cannot be loaded: said once for the run, never as a fault of
    the file it was first tried on. The message is the loader's line (it names the folder)."""


def drafter_failed(error: str | None, drafter: str) -> bool:
    """An error the drafter folder caused, not the file scored (the loader's lines name the folder first)."""
    return error is not None and error.startswith(drafter)


def _spread(members: list[DatasetRecord], want: int, taken: set[str]) -> list[str]:
    """Up to `want` usable paths at even spots after the first member up to the last (natural
    order; the first is where the representative usually is), not in `taken`."""
    got: list[str] = []
    n = len(members)
    if want <= 0 or n == 0:
        return got
    for j in range(1, want + 1):
        start = (j * (n - 1)) // want
        for r in members[start : start + LOOK_AHEAD]:
            if r["path"] in taken:
                continue
            if usable(decoded(r)):
                got.append(r["path"])
                taken.add(r["path"])
                break
    return got


def choose_files(records: list[DatasetRecord], findings: list[Finding], per_group: int = ACCEPT_FILES,
                 limit: int = MAX_ACCEPT) -> list[AcceptGroup]:
    """The groups to score, majority first: layers.choose's picks with "score" (the paths to
    score: the representative, then the spread) and "paths" (the group's files, for findings)."""
    picks = choose(records, findings)
    if not picks:
        return []
    per = max(1, min(per_group, limit // len(picks)))
    picks = picks[: max(1, limit // per)]
    own = {p for pick in picks[1:] for p in pick["paths"]}  # files of the groups reported on their own
    in_group, flagged = grouped_and_flagged(findings)  # a flagged file is never scored, as never chosen
    by_path = {r["path"]: r for r in records}
    plan: list[AcceptGroup] = []
    for pick in picks:
        if pick["group"] == "majority":
            members = [r for r in records if r["path"] not in own and r["path"] not in in_group]
        else:
            members = [by_path[p] for p in pick["paths"] if p in by_path]
        members.sort(key=lambda r: natural_key(r["path"]))
        taken = {pick["path"], *flagged}
        paths = [pick["path"], *_spread(members, per - 1, taken)]
        plan.append({**pick, "score": paths, "paths": [r["path"] for r in members]})
    return plan


async def score(source: Source, root: str, plan: list[AcceptGroup], *, drafter: str, model: str | None = None,
                steps: int = STEPS, on_progress: Callable[[int, int, str], None] | None = None,
                done: list[AcceptScore] | None = None) -> list[AcceptScore]:
    """Source.accept of each planned file, group by group (results are appended to `done` as
    they come, so a cancelled run keeps what it has). A drafter that does not load stops the
    run at its first file with DrafterUnusable (every other file would fail the same way); that
    file gets no result."""

    join = posixpath.join if source.host is not None else os.path.join
    results = done if done is not None else []
    paths = [p for group in plan for p in group["score"]]
    # a source that runs several at once (scan --ray's actors) gets the next ones started ahead
    ahead = Ahead(lambda i: source.accept(join(root, paths[i]), drafter, model=model, steps=steps), len(paths),
                  source_parallel(source))
    try:
        for i, rel in enumerate(paths):
            if on_progress is not None:
                on_progress(i + 1, len(paths), rel)
            kept = _kept(await ahead.result(i))
            if drafter_failed(kept.get("error"), drafter):
                raise DrafterUnusable(str(kept["error"]))
            results.append({**kept, "path": rel})
    finally:
        ahead.close()
    return results


def _kept(r: AcceptResult) -> AcceptScore:
    """What the report keeps of Source.accept's answer: top1, tau, steps, rows, error, computed, shape,
    targets (those it holds, in that order)."""
    kept: AcceptScore = {}
    if "top1" in r:
        kept["top1"] = r["top1"]
    if "tau" in r:
        kept["tau"] = r["tau"]
    if "steps" in r:
        kept["steps"] = r["steps"]
    if "rows" in r:
        kept["rows"] = r["rows"]
    if "error" in r:
        kept["error"] = r["error"]
    if "computed" in r:
        kept["computed"] = r["computed"]
    if (info := r.get("drafter_info")) and info.get("shape"):
        kept["shape"] = info["shape"]
    if "target_source" in r:
        kept["targets"] = r["target_source"]
    return kept


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def report(plan: list[AcceptGroup], results: list[AcceptScore], drafter: str,
           ) -> tuple[list[AcceptanceEntry], list[Finding]]:
    """(one "acceptance" entry per group with a result, findings for the dataset)."""
    entries: list[AcceptanceEntry] = []
    by_path = {r["path"]: r for r in results}
    for group in plan:
        got = [by_path[p] for p in group["score"] if p in by_path]
        if not got:
            continue
        ok = [r for r in got if "error" not in r and r.get("top1") is not None]
        errors = [r for r in got if "error" in r]
        entry: AcceptanceEntry = {
            "group": group["group"], "label": group["label"], "range": group["range"],
            "files": len(group["paths"]), "scored": len(ok), "paths": [r["path"] for r in ok],
            "top1": _mean([t for r in ok if (t := r.get("top1")) is not None]),
            "tau": _mean([t for r in ok if (t := r.get("tau")) is not None]),
            # a step no file reached is None in accept's answer: the mean is over the files that did
            "steps": [_mean([v for r in ok if (v := r["steps"][i]) is not None])
                      for i in range(min((len(r["steps"]) for r in ok), default=0))],
            "computed": got[0].get("computed"),
        }
        if errors:
            entry["errors"] = [error_result(r["path"], r["error"]) for r in errors]
        if (shape := next((r["shape"] for r in ok if r.get("shape")), None)):
            entry["shape"] = shape
        if (kinds := sorted({r["targets"] for r in ok if r.get("targets")})):
            entry["targets"] = kinds
        entries.append(entry)
    findings: list[Finding] = []
    major = entries[0] if entries and entries[0]["group"] == "majority" and entries[0]["top1"] is not None else None
    theirs = major["top1"] if major is not None else None
    paths_of = {g["label"]: g["paths"] for g in plan}
    for e in entries:
        mine = e["top1"]
        if major is None or theirs is None or e is major or mine is None:
            continue
        e["drop"] = round(100 * (theirs - mine), 1)  # points below the majority
        if theirs - mine > MIN_DROP:
            findings.append(finding(
                "group_low_acceptance", "warning",
                f"{_line(e, major)}: the drafter accepts far less on these files "
                f"(more than {100 * MIN_DROP:.0f} points below the majority); compare one with "
                "a majority file (scan --model names the layers each side holds)",
                group=e["label"], paths=paths_of[e["label"]], top1=e["top1"], majority_top1=major["top1"],
                drop=e["drop"],
            ))
    failed = [x for e in entries for x in e.get("errors", [])]
    if failed:
        findings.append(finding("accept_failed", "warning",
                                f"--accept could not score {len(failed)} file{'s' if len(failed) != 1 else ''} "
                                f"(e.g. {failed[0]['path']}: {failed[0]['error']})",
                                paths=[x["path"] for x in failed]))
    return entries, findings


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"


def _tau(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}"


def _line(e: AcceptanceEntry, major: AcceptanceEntry | None) -> str:
    kind = "" if e["group"] in ("majority", "shard") else f" ({e['group']})"
    n = f"{e['scored']} file{'s' if e['scored'] != 1 else ''}"
    text = f"{e['label']}{kind}: step-1 top-1 {_pct(e['top1'])} ({n} of {e['files']})"
    if major is None or e is major or e["top1"] is None:
        return text + f", τ {_tau(e['tau'])}"
    drop = round(e.get("drop", 0.0))
    cost = f"costs {drop} point{'s' if drop != 1 else ''}" if drop > 0 else "no cost" if drop == 0 else f"{-drop} point{'s' if drop != -1 else ''} above"
    return (text + f" vs the majority's {_pct(major['top1'])}: {cost}; τ {_tau(e['tau'])} vs {_tau(major['tau'])}")


def format_acceptance(entries: Sequence[AcceptanceEntry], drafter: str, planned: int | None = None) -> str:
    """The text report's section: one line per group (and its files that could not be scored)."""
    done = sum(e["scored"] + len(e.get("errors", [])) for e in entries)
    shape = next((e["shape"] for e in entries if e.get("shape")), None)
    kinds = sorted({k for e in entries for k in e.get("targets", [])})
    against = f" against {' and '.join(TARGETS.get(k, k) for k in kinds)}" if kinds else ""
    head = (f"acceptance (drafter {drafter}{f': {shape};' if shape else ','} {STEPS} steps{against}, "
            f"{done} file{'s' if done != 1 else ''} scored")
    head += f" of {planned} planned, interrupted):" if planned is not None and planned > done else "):"
    if not entries:
        return head + (" none" if planned else " no file to score (no readable sample without NaN/Inf)")
    major = entries[0] if entries[0]["group"] == "majority" else None
    lines = [head]
    for e in entries:
        lines.append("  " + _line(e, major))
        for x in e.get("errors", [])[:3]:
            lines.append(f"    not scored: {x['path']}: {x['error']}")
    return "\n".join(lines)
