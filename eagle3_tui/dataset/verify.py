"""`scan --model` verifies: besides a few representatives (layers.py), every suspect and a random
sample of the rest are identified, so that a minority at other layers that the signatures did not
set apart still shows up, with a stated guarantee.

Suspects: the files a signature_outliers finding names and the first and last file of each
layer_group run (the edges). The sample: drawn without replacement from the other usable files,
the fewest n with C(N - M, n) / C(N, n) <= 1 - CONFIDENCE, M = ceil(minority * N): a minority of
that share would be missed with probability at most 1%. 1% of 100,000 files: 459 draws; of 300:
all files but the last few. `--identify-all` identifies every usable file.

Plain Python (no Textual, no torch).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Sequence, Set

from eagle3_tui.dataset.findings import _features, _order_key
from eagle3_tui.dataset.outliers import outliers
from eagle3_tui.dataset.shapes import DatasetRecord, LayersEntry, Pick, VerifyPlan
from eagle3_tui.engines.results.findings import Finding, finding, sort_findings
from eagle3_tui.engines.results.identify import IdentifyResult
from eagle3_tui.sources.base import natural_key

#: the chance that a minority of the stated share shows up among the drawn files
CONFIDENCE = 0.99
#: the share of files a minority must reach to be seen with CONFIDENCE (--minority, in percent)
MINORITY = 0.01


def sample_size(population: int, minority: float, confidence: float = CONFIDENCE) -> int:
    """The fewest draws without replacement that hold a file of a minority of `minority` * N files
    with `confidence` (hypergeometric; at most the population)."""
    if population <= 0:
        return 0
    m = max(1, math.ceil(minority * population))
    miss, n = 1.0, 0
    while n < population and miss > 1.0 - confidence:
        miss *= (population - m - n) / (population - n) if population - m - n > 0 else 0.0
        n += 1
    return n


def verify_picks(records: list[DatasetRecord], findings: list[Finding], chosen: set[str], *,
                 minority: float = MINORITY, identify_all: bool = False,
                 usable: Callable[[DatasetRecord], bool] | None = None,
                 decoded: Callable[[DatasetRecord], DatasetRecord] = lambda r: r,
                 seed: int = 0) -> tuple[list[Pick], VerifyPlan]:
    """(picks to identify after the representatives, the plan): suspects first, then the drawn
    sample, in natural path order. `usable(record)` says whether a file can be identified;
    `decoded(record)` turns a lazy cached record into the record (layers.decoded)."""
    suspects: list[str] = past_the_limit(records, decoded)
    for f in findings:
        if f.get("code") == "signature_outliers":
            suspects += f.get("paths") or []
        elif f.get("code") == "layer_group" and f.get("paths"):
            suspects += [f["paths"][0], f["paths"][-1]]
    suspects = [p for p in dict.fromkeys(suspects) if p not in chosen]
    taken = chosen | set(suspects)
    pool = sorted((r["path"] for r in records if r["path"] not in taken and (usable is None or usable(decoded(r)))),
                  key=natural_key)
    if identify_all:
        drawn = pool
    else:
        n = sample_size(len(pool), minority)
        drawn = sorted(random.Random(seed).sample(pool, n), key=natural_key) if n < len(pool) else pool
    picks: list[Pick] = [{"group": "suspect", "label": "suspect", "path": p, "files": 1, "paths": [p], "range": None}
             for p in suspects]
    picks += [{"group": "sample", "label": "sample", "path": p, "files": 1, "paths": [p], "range": None}
              for p in drawn]
    plan: VerifyPlan = {"suspects": len(suspects), "drawn": len(drawn), "pool": len(pool), "minority": minority,
            "confidence": CONFIDENCE, "all": identify_all or len(drawn) == len(pool)}
    return picks, plan


def past_the_limit(records: list[DatasetRecord],
                   decoded: Callable[[DatasetRecord], DatasetRecord] = lambda r: r) -> list[str]:
    """The files whose signature goes past the outlier limit (dataset/outliers.py), named in a
    finding or not (a single file there may be an unusual prompt, or a file at other layers)."""


    rows = [r for r in (decoded(r) for r in records) if "error" not in r and r.get("signature")]
    if not rows:
        return []
    width = max(len(_features(r)) for r in rows)
    rows = sorted((r for r in rows if len(_features(r)) == width), key=_order_key)
    found = outliers([[math.nan if v is None else v for v in _features(r)] for r in rows])
    if not found:
        return []
    return [r["path"] for r, s in zip(rows, found["scores"], strict=True) if s > found["threshold"]]


def verdicts(picks: list[Pick], results: list[IdentifyResult], major: LayersEntry | None,
             plan: VerifyPlan | None, known: Set[str] = frozenset()) -> list[Finding]:
    """Findings over the verified files: each set of files whose boundaries differ from the
    majority's (layer_minority, warning, with every path), and the guarantee line (layers_checked).
    `known`: files a group already reports with its layers (a layer_group's)."""
    if major is None or "boundaries" not in major:
        return []
    other: dict[tuple[int | None, ...], list[str]] = defaultdict(list)
    agree: list[str] = []  # suspects found at the majority's boundaries (settle() clears them)
    checked = failed = 0
    for pick, r in zip(picks, results, strict=False):
        if pick["group"] not in ("suspect", "sample"):
            continue
        if "error" in r:
            failed += 1
            continue
        checked += 1
        post = r["layers"] + 1
        bounds = tuple(post if s.get("norm") == "post" else s.get("boundary") for s in r["slots"])
        if list(bounds) != major["boundaries"] and pick["path"] not in known:
            other[bounds].append(pick["path"])
        elif list(bounds) == major["boundaries"] and pick["group"] == "suspect":
            agree.append(pick["path"])
    out: list[Finding] = []
    post = major["layers"] + 1

    def shown(bs: Sequence[int | None]) -> str:
        return ", ".join("post-norm" if b == post else "?" if b is None else str(b) for b in bs)

    for bounds, paths in sorted(other.items(), key=lambda kv: -len(kv[1])):
        paths = sorted(paths, key=natural_key)
        diffs = {b - a for a, b in zip(major["boundaries"], bounds, strict=False) if a is not None and b is not None}
        how = ""
        if len(diffs) == 1 and None not in bounds and len(bounds) == len(major["boundaries"]):
            d = diffs.pop()
            how = f": every slot {abs(d)} boundar{'y' if abs(d) == 1 else 'ies'} {'deeper' if d > 0 else 'lower'}" if d else ""
        listed = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        out.append(finding("layer_minority", "warning",
                           f"{len(paths)} verified file{'s' if len(paths) != 1 else ''} hold slots at b "
                           f"{shown(bounds)}, the majority's at b {shown(major['boundaries'])}{how}: {listed}",
                           paths=paths, boundaries=list(bounds)))
    if plan is not None and checked:
        out.append(finding("layers_checked", "info", guarantee(plan, checked), **plan, checked=checked, failed=failed,
                           agree=sorted(agree, key=natural_key)))
    return out


def settle(findings: list[Finding], extra: list[Finding]) -> list[Finding]:
    """The dataset findings after `--model` verified files: a signature_outliers warning no longer
    names the files identify found at the majority's boundaries (`agree` of layers_checked); one
    left naming none is info, saying so. Otherwise the warning would say "captured at other
    layers" of files whose layers were just checked and found to be the majority's (on a real
    model, prompts with unusual token mixes can stand apart in their signature)."""
    agree = {p for f in extra if f.get("code") == "layers_checked" for p in f.get("agree") or []}
    if not agree:
        return findings
    out: list[Finding] = []
    for f in findings:
        if f.get("code") != "signature_outliers" or f.get("severity") != "warning" or not agree & set(f.get("paths") or []):
            out.append(f)
            continue
        keep = [(p, s) for p, s in zip(f["paths"], f.get("scores") or [None] * len(f["paths"]), strict=False) if p not in agree]
        cleared = len(f["paths"]) - len(keep)
        note = (f" ({cleared} file{'s' if cleared != 1 else ''} it named verified at the majority's boundaries by "
                "--model)")
        if keep:
            out.append({**f, "message": f["message"] + note, "paths": [p for p, _ in keep],
                        "scores": [s for _, s in keep]})
        else:
            out.append({**f, "severity": "info", "message": f"{f['message']}; every one of them verified at the "
                        "majority's boundaries by --model: an unusual signature, not other layers",
                        "verified": True})
    return out


def guarantee(plan: VerifyPlan, checked: int) -> str:
    """"layers checked on 473 files (12 suspects + 461 drawn at random): a minority of 1% or more
    would have shown up with 99% confidence"."""
    parts = f"{plan['suspects']} suspect{'s' if plan['suspects'] != 1 else ''}"
    if plan["all"]:
        return (f"layers checked on {checked} files ({parts} + every other usable file): every file's "
                "layers are known")
    return (f"layers checked on {checked} files ({parts} + {plan['drawn']} drawn at random of {plan['pool']}): "
            f"a minority of {plan['minority'] * 100:g}% or more would have shown up with {plan['confidence']:.0%} "
            "confidence")


def merge_later(findings: list[Finding], extra: list[Finding]) -> list[Finding]:
    """`findings` with those a later step made (the layers, the acceptance) sorted in, and what
    --model verified settled (settle)."""
    return sort_findings([*settle(findings, extra), *extra])
