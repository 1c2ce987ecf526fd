"""The report object every builder returns, and the Markdown pieces they share."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Generic, TypedDict, TypeVar

from eagle3_tui.engines.results.findings import Finding

#: the JSON's "format" and "version": a script checks both before it reads the rest
FORMAT = "eagle3-tui-export"
VERSION = 1
#: one table of a report shows at most this many rows (the JSON holds them all)
MAX_TABLE_ROWS = 50


class Envelope(TypedDict):
    """The keys every export's JSON starts with (each view's report adds its own after them)."""

    format: str  # FORMAT
    version: int  # VERSION
    view: str  # "compare" | "sample" | "dataset"
    created: str  # ISO 8601, UTC
    where: str  # the machine that computed it


#: an export's JSON object: one view's (reports/compare.py CompareReport, sample.py SampleReport,
#: dataset.py DatasetReport), each the envelope and its own keys. A type variable rather than
#: their union, so that this module, which they all build on, imports none of them.
Data = TypeVar("Data", bound=Envelope)


@dataclass
class Report(Generic[Data]):
    """One export: `view` ("compare" | "sample" | "dataset"), `subject` (what the file name
    says: the sample's or folder's name), the JSON object and the Markdown text."""

    view: str
    subject: str
    data: Data
    markdown: str = ""


def envelope(view: str, where: str, created: datetime | None = None) -> Envelope:
    """The keys every export's JSON starts with."""
    when = (created or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return {"format": FORMAT, "version": VERSION, "view": view,
            "created": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "where": where}


def num(value: Any, digits: int = 4) -> str:
    """A number as a person reads it in a table: 4 significant digits, – for none."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return f"{value:.{digits}g}"
    return cell(str(value))


def pct(value: float | None) -> str:
    """A fraction as a percentage with one decimal: 0.8123 -> 81.2%."""
    return "–" if value is None else f"{100 * value:.1f}%"


def cell(text: object) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: object) -> str:
    """Inline code that survives backticks in the text."""
    text = " ".join(str(text).split())
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}" if fence == "`" else f"{fence} {text} {fence}"


def table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table (numbers formatted by num), cut at MAX_TABLE_ROWS with a line that says so."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows[:MAX_TABLE_ROWS]:
        out.append("| " + " | ".join(num(v) for v in row) + " |")
    if len(rows) > MAX_TABLE_ROWS:
        out.append(f"\n({len(rows) - MAX_TABLE_ROWS:,} more rows in the JSON)")
    return out


def findings_lines(findings: Sequence[Finding]) -> list[str]:
    """The findings as a bulleted list: severity, code, the message with its numbers."""
    if not findings:
        return ["No findings."]
    return [f"- **{f.get('severity', '?').upper()}** {code(f.get('code', '?'))}: {cell(f.get('message', ''))}"
            for f in findings]


def scalars(part: Mapping[str, Any] | None) -> dict[str, object] | None:
    """A part's numbers without its per-token lists (those stay in the view and the CLI's --json)."""
    if part is None:
        return None
    return {k: v for k, v in part.items() if not isinstance(v, list | dict)}
