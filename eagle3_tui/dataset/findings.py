"""Dataset findings over scan records (engines/scan/records.py): what is wrong with the dataset as a whole.

Each finding: {"code", "severity": "error"|"warning"|"info", "message" (with numbers), and
"paths" (relative) or "groups", plus code-specific fields ("indices", "field", "range",
"confidence")}. Correct data raises nothing at warning or error level.

Runs on this machine, over the records that came back (never shipped to the box); torch only
inside layer_group's search, which the TUI runs in a child process (findings_child.py).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

from eagle3_tui.dataset.layer_group import MIN_RUN, in_process
from eagle3_tui.dataset.norm_scale import norm_scale
from eagle3_tui.dataset.outliers import exact_edges, outliers
from eagle3_tui.dataset.shapes import DatasetRecord, LayerSearch
from eagle3_tui.engines.model.vocab import coverage_finding
from eagle3_tui.engines.results.findings import Finding, Severity, finding, sort_findings
from eagle3_tui.engines.scan.agreement import low_acceptance

#: files at each end of a run that layer_group may not split off (too few to judge)
#: a run must also move at least one signature this many robust SDs from the rest: on real data,
#: index order can follow the source mix, which shifts signatures a little but not like a new layer
MIN_EFFECT = 1.0
SHOW = 5  # paths or numbers quoted in a message


def dataset_findings(records: list[DatasetRecord], layer_runs: LayerSearch | None = None) -> list[Finding]:
    """The findings over every record. `layer_runs(values, shard_of)` runs the layer_group search
    (dataset/layer_group.py: in_process, the default, imports torch; the TUI passes one that runs
    it in a child process). Nothing else here needs torch."""
    # records arrive in completion order; findings must not depend on it
    records = sorted(records, key=_order_key)
    samples = [r for r in records if "error" not in r]
    found: list[Finding] = []
    found += _unreadable(records)
    found += _nonfinite(samples)
    found += _layout(samples)
    if len(samples) >= 2 * MIN_RUN:
        if layer_runs is None:

            layer_runs = in_process
        grouped = _layer_group(samples, layer_runs)
        # files already named as broken (NaN, another layout) would stand apart for that reason
        broken = {p for f in found if f["severity"] != "info" for p in f.get("paths") or []}
        found += grouped + _signature_outliers([r for r in samples if r["path"] not in broken],
                                               {p for f in grouped for p in f["paths"]})
    found += _empty_loss(samples)
    found += _loss_on_padding(samples)
    found += _duplicates(samples)
    found += _missing(records)
    found += _padding_states(samples)
    found += norm_scale([r for r in samples if r["path"] not in _named(found)])
    found += low_acceptance(samples)  # scan --drafter (engines/scan/agreement.py)
    found += _draft_vocab(samples)
    return sort_findings(found)


def _named(found: list[Finding]) -> set[str]:
    """Files an error already names (NaN, another slot count): not judged again."""
    return {p for f in found if f["severity"] == "error" for p in f.get("paths") or []}


def _quote(items: list, show: int = SHOW) -> str:
    text = ", ".join(map(str, items[:show]))
    return text + (f" and {len(items) - show} more" if len(items) > show else "")


def _finding(code: str, severity: Severity, message: str, **fields: Any) -> Finding:
    return finding(code, severity, message, **fields)


# ------------------------------------------------------------------------------- per file


def _unreadable(records):
    bad = [r for r in records if "error" in r and not r.get("not_sample")]
    if not bad:
        return []
    reasons = Counter(r["error"] for r in bad)
    common = "; ".join(f"{n} x {why}" for why, n in reasons.most_common(3))
    return [_finding("unreadable", "error", f"{len(bad)} files cannot be read as samples ({common}): {_quote([r['path'] for r in bad])}",
                     paths=[r["path"] for r in bad])]


def _parts(r):
    return [*r["slots"], *([r["final"]] if r.get("final") else [])]


def _nonfinite(samples):
    bad = []
    for r in samples:
        parts = _parts(r)
        nan = sum(p["nan"] for p in parts)
        inf = sum(p["inf"] for p in parts)
        if nan or inf:
            rows = [p["first_nonfinite_row"] for p in parts if p["first_nonfinite_row"] is not None]
            bad.append((r, nan, inf, min(rows) if rows else None))
    if not bad:
        return []
    quick = any(r.get("mode") == "quick" for r, *_ in bad)
    desc = _quote([f"{r['path']} ({nan} NaN, {inf} Inf, first in row {row})" for r, nan, inf, row in bad], 3)
    note = " (quick scan: counted in the sampled rows only; --full counts every row)" if quick else ""
    return [_finding("nonfinite", "error", f"{len(bad)} files hold NaN/Inf hidden states: {desc}{note}",
                     paths=[r["path"] for r, *_ in bad],
                     counts=[{"path": r["path"], "nan": n, "inf": i, "first_row": row} for r, n, i, row in bad])]


def _layout(samples):
    out = []
    names = {"k": "slot count k", "hidden": "hidden size H", "dtype": "dtype", "schema": "schema"}
    for field, name in names.items():
        values = Counter(r[field] for r in samples)
        if len(values) < 2:
            continue
        major, n_major = values.most_common(1)[0]
        odd = [r for r in samples if r[field] != major]
        others = ", ".join(f"{v!s} in {n}" for v, n in values.most_common()[1:4])
        severity = "error" if field in ("k", "hidden") else "warning"
        out.append(_finding("layout_mismatch", severity,
                            f"{name} differs: {major} in {n_major} files, {others}: {_quote([r['path'] for r in odd])}",
                            field=field, majority=major, paths=[r["path"] for r in odd]))
    return out


def _empty_loss(samples):
    bad = [r["path"] for r in samples if r.get("loss_ones") == 0]
    if not bad:
        return []
    return [_finding("empty_loss_mask", "warning", f"{len(bad)} files have a loss mask of 0 on every token (they train nothing): {_quote(bad)}", paths=bad)]


def _loss_on_padding(samples):
    bad = [r for r in samples if r.get("masked_zero_tail", 0) >= 2]
    if not bad:
        return []
    desc = _quote([f"{r['path']} ({r['masked_zero_tail']} rows)" for r in bad], 3)
    return [_finding("loss_on_padding", "warning",
                     f"{len(bad)} files end in rows with id 0 and loss mask 1 (padding trained as tokens?): {desc}",
                     paths=[r["path"] for r in bad])]


def _duplicates(samples):
    by_print = defaultdict(list)
    for r in samples:
        by_print[r["fingerprint"]].append(r["path"])
    groups = [g for g in by_print.values() if len(g) > 1]
    if not groups:
        return []
    extra = sum(len(g) - 1 for g in groups)
    desc = "; ".join(" = ".join(g[:3]) for g in groups[:3])
    return [_finding("duplicate", "warning", f"{len(groups)} groups of files with identical ids and states ({extra} redundant files): {desc}",
                     groups=groups)]


def _missing(records):
    by_shard = defaultdict(set)
    for r in records:
        if r.get("index") is not None and not r.get("not_sample"):
            by_shard[r["shard"]].add(r["index"])
    out = []
    for shard, idx in sorted(by_shard.items()):
        lo, hi = min(idx), max(idx)
        gone = [i for i in range(lo, hi + 1) if i not in idx] if hi - lo < 10_000_000 else []
        if gone:
            out.append(_finding("missing_index", "info",
                                f"{shard or '.'}: {len(gone)} numbers missing between {lo} and {hi}: {_quote(gone, 10)} "
                                "(SpecForge skips samples it could not make; a copy that stopped leaves gaps too)",
                                shard=shard, indices=gone))
    return out


def _padding_states(samples):
    padded = [r for r in samples if r.get("padding")]
    live = [r for r in padded if r.get("padding_nonzero")]
    if not live:
        return []
    rows = sum(r["padding"] for r in live)
    return [_finding("padding_states", "info",
                     f"{len(live)} of {len(samples)} files end in padding rows (ids 0, loss mask 0; {rows} rows in all) "
                     "that carry non-zero hidden states, as batched SpecForge runs write them: exclude them when comparing",
                     paths=[r["path"] for r in live])]


# ------------------------------------------------------------------------------- layer groups


def _features(r: DatasetRecord) -> list[float | None]:
    sig = r.get("signature") or {}
    vals = [math.log(v) if v and v > 0 else None for v in sig.get("rel_final", [])]
    vals += list(sig.get("cos_next", []))
    vals.append(sig.get("cos_final"))
    return vals


def _order_key(r: DatasetRecord) -> tuple[bool, int, str]:
    return (r.get("index") is None, r.get("index") or 0, r["path"])


def _layer_group(samples: list[DatasetRecord], runner: LayerSearch) -> list[Finding]:
    """Runs of files (in index order) whose signatures depart from the rest of the dataset.

    The statistic is the "epidemic" change point: for every run [a, b) of files, the standardised
    distance between the run's mean signature and the rest's, weighted by m(n-m)/n; its maximum
    is compared with the maxima of PERMUTATIONS shuffles of the file order (an order that does
    not matter gives no run). A run found is taken out and the rest searched again
    (dataset/layer_group.py, torch; `runner` may run it in another process). The run must also
    move some signature by MIN_EFFECT robust SDs.
    """
    if len(samples) < 2 * MIN_RUN:
        return []
    common = Counter((r["k"], r["hidden"], len(_features(r))) for r in samples).most_common(1)[0][0]
    rows = sorted((r for r in samples if (r["k"], r["hidden"], len(_features(r))) == common), key=_order_key)
    if len(rows) < 2 * MIN_RUN:
        return []
    values = [[math.nan if v is None else v for v in _features(r)] for r in rows]
    shard_ids: dict[str, int] = {}
    shard_of = [shard_ids.setdefault(r["shard"], len(shard_ids)) for r in rows]
    found = runner(values, shard_of)
    names = _feature_names(rows[0])


    out = []
    rest = found["rest"]
    for run in found["runs"]:
        effect, p = run["effect"], run["p"]
        if effect < MIN_EFFECT or len(run["run"]) < MIN_RUN:
            continue
        files = [rows[i] for i in exact_edges(values, run["run"])]
        shards = sorted({r["shard"] or "." for r in files})  # "": the scanned folder is the shard
        idx = [r["index"] for r in files if r["index"] is not None]
        where = f"indices {min(idx)}..{max(idx)}" if idx else f"{files[0]['path']} .. {files[-1]['path']}"
        confidence = 1.0 - p
        name = names[run["col"]]
        out.append(_finding(
            "layer_group", "warning",
            f"{len(files)} files ({where}, shard {_quote(shards, 2)}) depart from the other {rest}: "
            f"{name} {_show(name, run['inside'])} vs {_show(name, run['rest'])} "
            f"({effect:.1f} robust SD), as a re-run with other layer ids or another tool version leaves "
            f"behind (confidence {confidence:.1%}, permutation test over the file order)",
            range=[min(idx), max(idx)] if idx else None, paths=[r["path"] for r in files],
            confidence=round(confidence, 4), effect=round(effect, 2), feature=name,
        ))
    return out


def _signature_outliers(samples: list[DatasetRecord], grouped: set[str]) -> list[Finding]:
    """Files whose signature stands apart from the bulk in any order (dataset/outliers.py): a
    minority captured at other layers, scattered among the files. Files a layer_group finding
    already names are not named again."""

    if not samples:
        return []
    common = Counter((r["k"], r["hidden"], len(_features(r))) for r in samples).most_common(1)[0][0]
    rows = sorted((r for r in samples if (r["k"], r["hidden"], len(_features(r))) == common), key=_order_key)
    values = [[math.nan if v is None else v for v in _features(r)] for r in rows]
    found = outliers(values)
    if not found:
        return []
    names, out = _feature_names(rows[0]), []
    scores, limit = found["scores"], found["threshold"]
    for members in found["clusters"]:
        files = [rows[i] for i in members if rows[i]["path"] not in grouped]
        if not files:
            continue
        bulk = [i for i in range(len(rows)) if scores[i] <= limit]
        col, inside, rest = _moved_most(values, members, bulk)
        shown = sorted(((rows[i]["path"], scores[i]) for i in members if rows[i]["path"] not in grouped),
                       key=lambda x: -x[1])
        top = max(scores[i] for i in bulk) if bulk else 0.0
        out.append(_finding(
            "signature_outliers", "warning",
            f"{len(files)} of {len(rows)} files stand apart from the bulk in their layer signature "
            f"(scores {min(s for _, s in shown):.1f}..{max(s for _, s in shown):.1f} robust SD; the bulk "
            f"reaches {top:.1f}, the limit is {limit:.1f}): {_quote([p for p, _ in shown])}; "
            f"{names[col]} {_show(names[col], inside)} vs {_show(names[col], rest)}, as files captured at "
            "other layers or by another tool version leave behind",
            paths=[p for p, _ in shown], scores=[round(s, 2) for _, s in shown], threshold=round(limit, 2),
            feature=names[col],
        ))
    return out


def _moved_most(values, members, bulk) -> tuple[int, float, float]:
    """(the feature that separates the members from the bulk most, its median inside, outside)."""
    def med(xs):
        xs = sorted(x for x in xs if x is not None and math.isfinite(x))
        return xs[len(xs) // 2] if xs else math.nan

    best = (0, math.nan, math.nan, -1.0)
    for j in range(len(values[0])):
        col = [values[i][j] for i in bulk]
        m_in, m_out = med(values[i][j] for i in members), med(col)
        spread = med(abs(x - m_out) for x in col if math.isfinite(x)) or 1e-12
        gap = abs(m_in - m_out) / spread if math.isfinite(m_in) and math.isfinite(m_out) else -1.0
        if gap > best[3]:
            best = (j, m_in, m_out, gap)
    return best[0], best[1], best[2]


def _feature_names(r: DatasetRecord) -> list[str]:
    sig = r.get("signature") or {}
    names = [f"slot {i} norm / final norm" for i in range(len(sig.get("rel_final", [])))]
    names += [f"cos(slot {i}, slot {i + 1})" for i in range(len(sig.get("cos_next", [])))]
    names.append("cos(last slot, final)")
    return names


def _show(name: str, value: float) -> str:
    return f"{math.exp(value):.3g}" if "norm" in name else f"{value:.3g}"


def _draft_vocab(samples):
    # the draft vocabulary's coverage lives with the rest of the vocab code (engines/model/vocab.py)

    found = coverage_finding(samples)
    return [found] if found else []
