"""The draft vocabulary of an EAGLE-3 drafter: which target tokens it can propose at all.

SpecForge writes `vocab_mapping.pt` next to the data (DATASET/vocab_mapping/vocab_mapping.pt):
    {"d2t": int64 [draft],  target id = draft id + d2t[draft id]
     "t2d": bool  [V],      True where the target id is in the draft vocabulary}
A loss-masked target token outside the draft vocabulary is one the drafter is trained on but can
never propose, so the share of loss tokens inside it bounds what acceptance can reach.

The file itself is read and checked in engines/read/vocab_file.py. Shipped to the box: torch and stdlib only.
"""

from __future__ import annotations

import os
from typing import Any

from eagle3_tui.engines.read.vocab_file import (  # noqa: F401 - the file's reader, re-exported for callers
    VocabError,
    VocabMapping,
    check_offsets,
    describe_file,
    load_mapping,
    mapping_from,
)
from eagle3_tui.engines.results.findings import Finding, Severity, finding
from eagle3_tui.engines.results.scan import DraftVocabCounts, ScanRecord, ScanVocabPart
from eagle3_tui.engines.results.summary import OutOfVocab, SampleVocab, Summary

FILE_NAME = "vocab_mapping.pt"
#: below this share of loss tokens in the draft vocabulary, scan warns
WARN_BELOW = 0.90
#: out-of-vocabulary tokens listed per sample (the count covers them all)
SHOW_OOV = 50


_loaded: dict[tuple, VocabMapping] = {}


def cached_mapping(path: str) -> VocabMapping:
    """load_mapping once per file version (path, size, mtime) in this process."""
    try:
        st = os.stat(path)
    except OSError as err:
        raise VocabError(f"{path}: {err.strerror}") from None
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    if key not in _loaded:
        _loaded.clear()
        _loaded[key] = load_mapping(path)
    return _loaded[key]


def find_mapping(folder: str, *, levels: int = 4) -> str | None:
    """DATASET/vocab_mapping/vocab_mapping.pt (or DATASET/vocab_mapping.pt) for `folder` or one of
    its parents: the shard folders of a dataset sit below the mapping. A few stats, no listing."""
    here = os.path.abspath(folder)
    for _ in range(levels + 1):
        for candidate in (os.path.join(here, "vocab_mapping", FILE_NAME), os.path.join(here, FILE_NAME)):
            if os.path.isfile(candidate):
                return candidate
        up = os.path.dirname(here)
        if up == here:
            break
        here = up
    return None


def loss_ids(ids: Any, mask: Any, valid: int) -> Any:
    """The target ids that carry loss (mask on, within the valid rows); every valid id when the
    file has no loss mask."""
    ids = ids[:valid]
    if mask is None:
        return ids
    return ids[mask[:valid].ne(0)]


def loss_counts(mapping: VocabMapping, ids: Any, mask: Any, valid: int) -> DraftVocabCounts:
    """{"in", "out"}: loss tokens of one sample inside / outside the draft vocabulary."""
    picked = loss_ids(ids, mask, valid)
    inside = int(mapping.in_draft(picked).sum())
    return {"in": inside, "out": int(picked.numel()) - inside}


def scan_counts(path: str | None, ids: Any, mask: Any, valid: int) -> ScanVocabPart:
    """The part of a scan record this module owns: {"draft_vocab": {"in", "out"}} when a mapping
    is in use and the file has ids, else nothing. A broken mapping is reported once by the scan,
    not per file."""
    if path is None or ids is None:
        return {}
    try:
        mapping = cached_mapping(path)
    except VocabError:
        return {}
    return {"draft_vocab": loss_counts(mapping, ids, mask, valid)}


def sample_vocab(mapping: VocabMapping, ids: list[int], mask: list[int] | None, valid: int,
                 text: list[str] | None = None) -> SampleVocab:
    """Per sample (for the sample view): the share of loss tokens in the draft vocabulary and the
    first out-of-vocabulary ones (row, id, and text when the summary has it)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    rows = torch.arange(min(valid, len(ids)))
    if mask is not None:
        rows = rows[torch.tensor(mask[: len(rows)], dtype=torch.long).ne(0)]
    picked = torch.tensor(ids, dtype=torch.long)[rows] if len(rows) else torch.zeros(0, dtype=torch.long)
    inside = mapping.in_draft(picked)
    oov_rows = rows[~inside].tolist()
    total = int(picked.numel())
    n_in = int(inside.sum())
    oov: list[OutOfVocab] = []
    for t in oov_rows[:SHOW_OOV]:
        item: OutOfVocab = {"index": t, "id": ids[t]}
        if text is not None and t < len(text):
            item["text"] = text[t]
        oov.append(item)
    return {"file": mapping.file, "draft": mapping.draft, "target": mapping.target, "in": n_in,
            "out": total - n_in, "coverage": n_in / total if total else None, "oov": oov}


def annotate_summary(summary: Summary, path: str | None) -> Summary:
    """Add "vocab" (sample_vocab) to a summary with ids, or "vocab_error" saying why not."""
    if not path or "error" in summary or (ids := summary.get("ids")) is None:
        return summary
    try:
        mapping = cached_mapping(path)
    except VocabError as err:
        summary["vocab_error"] = str(err)
        return summary
    summary["vocab"] = sample_vocab(mapping, ids, summary.get("mask"), summary.get("valid_tokens") or len(ids),
                                    summary.get("text"))
    return summary


def coverage_finding(records: list[ScanRecord], mapping: str | None = None) -> Finding | None:
    """The `draft_vocab_coverage` finding over the records that carry draft_vocab counts (None
    when none do): the share of loss-masked target tokens in the draft vocabulary; a warning
    below WARN_BELOW, info otherwise."""
    counted = [r for r in records if r.get("draft_vocab")]
    if not counted:
        return None
    n_in = sum(r["draft_vocab"]["in"] for r in counted)
    n_out = sum(r["draft_vocab"]["out"] for r in counted)
    total = n_in + n_out
    coverage = n_in / total if total else None
    worst = sorted((r for r in counted if r["draft_vocab"]["out"]),
                   key=lambda r: -r["draft_vocab"]["out"] / max(1, r["draft_vocab"]["in"] + r["draft_vocab"]["out"]))
    where = f" ({mapping})" if mapping else ""
    if coverage is None:
        message = f"no loss-masked tokens to check against the draft vocabulary{where}"
    else:
        message = (f"{coverage:.1%} of {total:,} loss-masked target tokens are in the draft vocabulary{where}; "
                   f"{n_out:,} can never be proposed by the drafter")
        if worst:
            message += "; most outside in " + ", ".join(r["path"] for r in worst[:3])
    severity: Severity = "warning" if coverage is not None and coverage < WARN_BELOW else "info"
    return finding("draft_vocab_coverage", severity, message,
                   coverage=coverage, in_vocab=n_in, out_of_vocab=n_out, files=len(counted),
                   paths=[r["path"] for r in worst[:5]])


def mapping_for_scan(root: str, given: str | None, rels: list[str]) -> str | None:
    """The mapping a scan of `root` counts against: the one given, else a vocab_mapping.pt among
    the scanned files (the shallowest), else None. Loaded here once so that a broken file is not
    met per record (scan_counts then skips it) and forked workers inherit it."""
    path = given
    if path is None:
        found = sorted((r for r in rels if r.rsplit("/", 1)[-1] == FILE_NAME), key=lambda r: (r.count("/"), r))
        path = os.path.join(root, found[0]) if found else None
    if path is None:
        return None
    try:
        cached_mapping(path)
    except VocabError:
        return None
    return path
