"""One registry of finding codes (eagle3_tui/engines/finding_codes.py), held against the code that
raises them, docs/ and the README, both ways: a code raised but not registered, registered but
never raised, raised more severely than registered, documented but unknown, or registered but
undocumented fails with the code and the place it is missing from."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from eagle3_tui.engines.finding_codes import CODES, FindingCode, raised_by, title
from eagle3_tui.engines.results.findings import finding

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "eagle3_tui"
ORDER = {"error": 0, "warning": 1, "info": 2}
CODE = re.compile(r"[a-z]+(?:_[a-z]+)*")
#: the calls that build a finding: results.finding, dataset/findings.py's _finding, Comparison.add
BUILDERS = {"finding", "_finding", "add"}


def _raised() -> dict[str, list[tuple[str, str | None]]]:
    """code -> [(where, literal severity or None)] for every finding the package builds."""
    out: dict[str, list[tuple[str, str | None]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "finding_codes.py":
            continue
        where = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(), filename=where)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            first = node.args[0]
            if name not in BUILDERS:
                continue
            if isinstance(first, ast.JoinedStr):  # capture_faults: f"{prefix}_{code}"
                for code in _composed(tree):
                    out.setdefault(code, []).append((where, "warning"))
                continue
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str) and CODE.fullmatch(first.value)):
                continue
            sev = node.args[1] if len(node.args) > 1 else None
            level = sev.value if isinstance(sev, ast.Constant) and sev.value in ORDER else None
            out.setdefault(first.value, []).append((f"{where}:{node.lineno}", level))
    return out


def _composed(tree: ast.Module) -> set[str]:
    """engines/model/capture_faults.py names its codes "<prefix>_<kind>": the prefixes its callers
    pass (slot by default, final) times the kinds its `_finding` returns."""
    kinds = {n.value.elts[0].value for n in ast.walk(tree)
             if isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple) and n.value.elts
             and isinstance(n.value.elts[0], ast.Constant) and isinstance(n.value.elts[0].value, str)}
    return {f"{prefix}_{kind}" for prefix in ("slot", "final") for kind in kinds}


def test_every_code_raised_is_registered_and_every_registered_code_is_raised():
    raised = _raised()
    unregistered = {c: [w for w, _ in raised[c]] for c in sorted(set(raised) - set(CODES))}
    never = sorted(set(CODES) - set(raised))
    assert not unregistered, (
        "raised but missing from eagle3_tui/engines/finding_codes.py CODES (add a line there, a row in "
        f"docs/findings.md, a mention in the README): {unregistered}")
    assert not never, f"in eagle3_tui/engines/finding_codes.py CODES but raised nowhere in the package: {never}"


def test_no_code_is_raised_more_severely_than_registered():
    worse = [f"{code} raised as {level} at {where}, registered as {CODES[code].severity}"
             for code, uses in _raised().items() if code in CODES
             for where, level in uses if level is not None and ORDER[level] < ORDER[CODES[code].severity]]
    assert not worse, worse


def _table_rows(text: str) -> list[tuple[list[str], list[str]]]:
    """(backticked names of the first cell, the other cells) of every Markdown table row whose
    second cell starts with a severity: how docs/ lists finding codes."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[1].split(" ")[0] in ORDER:
            rows.append((re.findall(r"`([a-z_*]+)`", cells[0]), cells[1:]))
    return rows


def _known(name: str) -> bool:
    """A registered code, or a pattern (`final_*`) that names at least one."""
    if name.endswith("*"):
        return any(c.startswith(name[:-1]) for c in CODES)
    return name in CODES


def test_docs_findings_page_is_the_registry():
    page = ROOT / "docs" / "findings.md"
    rows = {names[0]: cells for names, cells in _table_rows(page.read_text()) if names}
    missing = sorted(set(CODES) - set(rows))
    unknown = sorted(set(rows) - set(CODES))
    differ = [f"{c}: docs say {rows[c][0]!r} / {rows[c][1]!r}, the registry {CODES[c].severity!r} / {CODES[c].title!r}"
              for c in sorted(set(rows) & set(CODES))
              if (rows[c][0], rows[c][1]) != (CODES[c].severity, CODES[c].title)]
    assert not missing, f"registered but without a row in docs/findings.md: {missing}"
    assert not unknown, f"rows of docs/findings.md that eagle3_tui/engines/finding_codes.py does not register: {unknown}"
    assert not differ, differ


def test_every_code_a_docs_table_lists_is_registered():
    unknown = [f"docs/{p.name}: `{name}`" for p in sorted((ROOT / "docs").glob("*.md"))
               for names, _ in _table_rows(p.read_text()) for name in names if not _known(name)]
    assert not unknown, f"listed as finding codes in docs but not in eagle3_tui/engines/finding_codes.py: {unknown}"


def test_the_readme_names_every_code_and_only_registered_ones_in_its_lists():
    readme = (ROOT / "README.md").read_text()
    unnamed = [c for c in CODES if not re.search(rf"`{c}`", readme)]
    assert not unnamed, f"registered but never named (in backticks) in README.md: {unnamed}"
    # the README's lists of codes: the paragraphs that open with "Finding codes:" or "Findings:"
    # (compare, identify, scan), and serve-check's "(findings: ...)"
    listed = re.findall(r"(?:Finding codes:|Findings:|\(findings:)(.*?)(?:\n\n|\)\.|\. Exit)", readme, re.S)
    unknown = sorted({n for para in listed for n in re.findall(r"`([a-z_]+)`", para)} - set(CODES))
    assert listed and not unknown, f"listed as finding codes in README.md but not registered: {unknown}"


def test_the_compare_view_and_the_layers_step_read_the_registry():
    from eagle3_tui.dataset.layers import _LIFTED
    from eagle3_tui.ui.compare.format import TITLES

    assert TITLES == {c: e.title for c, e in CODES.items()}
    assert title("capture_fault") == "a capture-code fault" and title("a_newer_code") == "a_newer_code"
    # identify's own findings lifted to a group of files: about the states, never the convention
    assert "slot_lag" in _LIFTED and "final_mid_layer" in _LIFTED and "layer_convention" not in _LIFTED
    assert set(_LIFTED) == set(raised_by("identify", "scan --model"))


def test_every_entry_is_complete():
    bad = [e.code for e in CODES.values()
           if not (isinstance(e, FindingCode) and CODE.fullmatch(e.code) and e.severity in ORDER and e.title
                   and e.meaning and "\n" not in e.meaning and e.raised_by)]
    assert not bad, bad


def test_a_finding_is_built_only_for_a_registered_code_at_its_level_or_below():
    """The static walk above sees literal codes; `finding` itself holds the rest (composed codes,
    severities chosen at run time): it refuses what the registry does not promise."""
    built = finding("scale_mismatch", "info", "ratio 2.0", factor=2.0)
    assert built == {"code": "scale_mismatch", "severity": "info", "message": "ratio 2.0", "factor": 2.0}
    with pytest.raises(ValueError, match="not in engines/finding_codes.py"):
        finding("scale_mismatched", "warning", "a typo of a registered code")
    with pytest.raises(ValueError, match="at most 'warning'"):
        finding("scale_mismatch", "error", "more severe than the docs say")
