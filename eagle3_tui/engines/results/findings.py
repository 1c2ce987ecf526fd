"""A finding: {"code", "severity", "message", ...details}, built only by `finding` (which checks
the code against engines/finding_codes.py), and the severity order every list of them keeps."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from eagle3_tui.engines.finding_codes import CODES

Severity = Literal["error", "warning", "info"]

SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}

class Finding(TypedDict, total=False):
    code: str  # e.g. "slot_mismatch"; engines/finding_codes.py registers every one
    severity: Severity
    message: str  # one sentence with the numbers that prove it
    # plus details that depend on the code (slots, factor, offset, ...); those the dataset's
    # readers use (dataset/marks.py, verify.py, layers.py) are named:
    paths: list[str]  # the files it names (relative to the scanned root)
    groups: list[list[str]]  # or the groups of files it names
    range: list[int] | None  # layer_group: the first and last file index of the run
    scores: list[float | None]  # signature_outliers: each path's score
    agree: list[str]  # layers_checked: suspects found at the majority's boundaries
    verified: bool  # signature_outliers: every file it named was found at the majority's layers
    group: str  # the layers' and acceptance's findings: the group of files they are about
    follows: str | None  # layer_convention: the reading the slots follow ("output", "input", "mixed", ...)
    ids: list[int]  # layer_convention: the layer ids read
    ids_from: str  # layer_convention: where they were found
    a_id: int  # token_divergence: the ids where A and B part (engines/compare/align.py)
    b_id: int
    a_text: str  # with a tokenizer (engines/read/tokens.py annotate_comparison)
    b_text: str

def finding(code: str, severity: Severity, message: str, **details: Any) -> Finding:
    """{"code", "severity", "message", **details}: the one way a finding is built.

    The code must be registered (engines/finding_codes.py) and raised no more severely than its
    entry says: every command's findings pass here, so a new code nobody registered, or an error
    raised where the registry (and docs/findings.md) promise a warning, fails the first test that
    meets it instead of reaching a user's screen untitled."""
    entry = CODES.get(code)
    if entry is None:
        raise ValueError(f"finding code {code!r} is not in engines/finding_codes.py")
    if SEVERITY_ORDER[severity] < SEVERITY_ORDER[entry.severity]:
        raise ValueError(f"finding {code!r} raised as {severity!r}; the registry says at most {entry.severity!r}")
    return {"code": code, "severity": severity, "message": message, **details}  # type: ignore[typeddict-item]

def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Errors first, then warnings, then notes; the order within a severity is kept."""
    findings.sort(key=lambda f: SEVERITY_ORDER.get(f["severity"], len(SEVERITY_ORDER)))
    return findings

def blocking(findings: list[Finding]) -> bool:
    """Whether any finding is a warning or an error (the commands then exit 1)."""
    return any(f["severity"] in ("warning", "error") for f in findings)
