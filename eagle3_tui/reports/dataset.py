"""The dataset view's report: the scan's counts, every finding, the numbers of the files the
findings name (from the scan records the view holds) and, with --model, the layers."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypedDict, cast

from eagle3_tui.engines.results.findings import Finding
from eagle3_tui.reports.model import Envelope, Report, cell, code, envelope, findings_lines, table

#: a record's fields a file row of the report keeps (the JSON's "files" entries)
FILE_KEYS = ("path", "status", "error", "schema", "tokens", "valid_tokens", "padding", "loss_ones", "k", "hidden",
             "dtype", "final_norm", "mode", "fingerprint")
#: at most this many files are listed (the findings' own paths are never cut)
MAX_FILES = 1000


class DatasetCounts(TypedDict):
    files: int
    unreadable: int
    not_samples: int
    cached: int  # records from the record cache


class PartNorms(TypedDict):
    norm_mean: float | None
    norm_max: float | None
    nan: int | None
    inf: int | None
    first_nonfinite_row: int | None


class FileRow(TypedDict, total=False):
    """A file the findings name: its record's FILE_KEYS (those set) and its parts' norms."""

    path: str
    status: str  # the view's verdict of the file
    error: str
    schema: str
    tokens: int
    valid_tokens: int
    padding: int
    loss_ones: int
    k: int
    hidden: int
    dtype: str
    final_norm: str
    mode: str
    fingerprint: str
    slots: list[PartNorms]
    final: PartNorms | None


class DatasetReport(Envelope):
    """The dataset view's export (its JSON), after the envelope's keys."""

    folder: str
    state: str  # "done", "cancelled", "scanning"...
    counts: DatasetCounts
    findings: list[Finding]
    files: list[FileRow]  # at most MAX_FILES
    layers: Sequence[Mapping[str, Any]] | None  # --model: the layers' entries
    serving: dict[str, Any] | None  # serve-check --json (dataset/serving/, above this layer) + "drafter_path"


def dataset_report(folder: str, *, where: str, findings: list[Finding], records: Iterable[Any],
                   state: str, layers: Sequence[Mapping[str, Any]] | None = None, layer_lines: list[str] | None = None,
                   created: datetime | None = None, serving: dict[str, Any] | None = None) -> Report[DatasetReport]:
    """records: the scan records (dicts, or the view's records: anything with .get); the files
    the findings name are listed with their numbers. state: "done", "cancelled", "scanning"...
    serving: with --drafter and --model, the serve-check (`serve-check --json` plus "drafter_path";
    or {"drafter_path", "error"})."""
    records = list(records)
    named = {p for f in findings for p in _paths(f)}
    data: DatasetReport = {
        **envelope("dataset", where, created),
        "folder": folder,
        "state": state,
        "counts": {
            "files": len(records),
            "unreadable": sum(1 for r in records if r.get("error") and not r.get("not_sample")),
            "not_samples": sum(1 for r in records if r.get("not_sample")),
            "cached": sum(1 for r in records if r.get("cached")),
        },
        "findings": list(findings),
        "files": [_file(r) for r in records if r.get("path") in named][:MAX_FILES],
        "layers": layers or None,
        "serving": serving,
    }
    subject = posixpath.basename(folder.rstrip("/")) or "dataset"
    return Report("dataset", subject, data, _markdown(data, layer_lines or []))


def _paths(f: Mapping[str, Any]) -> list[str]:
    if f.get("paths"):
        return list(f["paths"])
    return [p for group in f.get("groups") or () for p in group]


def _norms(part: Any) -> PartNorms:
    """A part of a record (SlotRecord, or the view's SlotStats: anything with .get)."""
    return {"norm_mean": part.get("norm_mean"), "norm_max": part.get("norm_max"), "nan": part.get("nan"),
            "inf": part.get("inf"), "first_nonfinite_row": part.get("first_nonfinite_row")}


def _file(r: Any) -> FileRow:
    """A record (a ScanRecord, or the view's Record) as a file row: the FILE_KEYS it has, its parts' norms."""
    out = cast(FileRow, {k: r.get(k) for k in FILE_KEYS if r.get(k) is not None})
    out["slots"] = [_norms(s) for s in r.get("slots") or ()]
    out["final"] = _norms(final) if (final := r.get("final")) is not None else None
    return out


def _markdown(d: DatasetReport, layer_lines: list[str]) -> str:
    c = d["counts"]
    out = [f"# eagle3-tui dataset: {code(d['folder'])}", "",
           f"Exported {d['created']} · scanned on {cell(d['where'])} · scan {cell(d['state'])}", "",
           (f"- {c['files']:,} files: {c['unreadable']:,} unreadable, {c['not_samples']:,} not samples, "
            f"{c['cached']:,} from the record cache"),
           "", "## Findings", "", *findings_lines(d["findings"])]
    if d["files"]:
        rows = []
        for f in d["files"]:
            means = [s.get("norm_mean") for s in f["slots"]]
            rows.append([f.get("path"), f.get("status"), f.get("tokens"), f.get("valid_tokens"),
                         " / ".join("–" if m is None else f"{m:.4g}" for m in means) or "–",
                         fin["norm_mean"] if (fin := f.get("final")) else None, f.get("error") or ""])
        out += ["", "## Files the findings name", "",
                *table(["file", "status", "T", "valid T", "slot norm means", "final norm mean", "error"], rows)]
    if layer_lines:
        out += ["", "## Layers (--model)", "", *(f"    {line}" for line in layer_lines)]
    if d["serving"]:
        out += ["", "## Serving (--drafter: the engines' reading of its config.json)", "", *_serving_lines(d["serving"])]
    return "\n".join(out) + "\n"


def _serving_lines(s: dict[str, Any]) -> list[str]:
    """serve-check's table: one row per engine and version range, then its findings and the fix."""
    if "engines" not in s:
        return [f"serve-check of {code(s.get('drafter_path'))} failed: {cell(s.get('error'))}"]
    L = s["data"]["layers"]
    held = ", ".join("?" if b is None else "post" if b == L + 1 else str(b) for b in s["data"]["boundaries"])
    rows = [[name, got, "yes" if e["matches"] else "**no**", "yes" if e["guessed"] else "", why]
            for (_verdict, name, got, why), e in zip(s["table"], s["engines"], strict=False)]
    out = [f"Drafter {code(s.get('drafter_path'))}; the data holds b {held} "
           f"(L = {L}{', ' + cell(s['data']['arch']) if s['data'].get('arch') else ''}).", "",
           *table(["engine", "captures", "matches", "guessed", "why"], rows), "",
           *findings_lines(s["findings"])]
    if s.get("fix"):
        out += ["", "Fix:", "", *(f"    {line}" for line in s["fix"]["lines"])]
    return out
