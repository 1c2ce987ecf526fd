"""Records are typed where they travel, and built one way: a finding only by results.finding,
and the engines' entry points and the sources say which result type they give (read from the
source, so no module is imported: torch stays out of this test)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "eagle3_tui"

#: the one place a finding dict is written out
CONSTRUCTOR = PACKAGE / "engines" / "results.py"
#: modules the lead is reshaping in another branch; they move to finding() when that lands
NOT_YET: set = set()

#: (module, qualified function) -> the result type its annotation must name
ANNOTATED = {
    ("engines/read/stats.py", "summarize_file"): "Summary",
    ("engines/read/stats.py", "summarize"): "Summary",
    ("engines/compare/run.py", "compare_files"): "ComparisonResult",
    ("engines/compare/run.py", "compare"): "ComparisonResult",
    ("engines/model/identify.py", "identify_file"): "IdentifyResult",
    ("engines/model/identify.py", "identify"): "IdentifyResult",
    ("engines/model/identify.py", "summarize_identified"): "Summary",
    ("engines/model/accept.py", "accept_file"): "AcceptResult",
    ("engines/model/accept.py", "accept"): "AcceptResult",
    ("engines/scan/records.py", "scan_file"): "ScanRecord",
    ("engines/scan/records.py", "scan_tree"): "Iterator[ScanRecord]",
    **{
        (module, f"{cls}.{method}"): kind
        for module, cls in (("sources/base.py", "Source"), ("sources/local.py", "LocalSource"),
                            ("sources/ssh.py", "SshSource"))
        for method, kind in (("summarize", "Summary"), ("compare", "ComparisonResult"),
                             ("identify", "IdentifyResult"), ("accept", "AcceptResult"),
                             ("scan", "AsyncIterator[ScanRecord | ScanProgressItem]"))
    },
}


def _keys(node: ast.Dict) -> set[str]:
    return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def test_findings_are_built_by_the_constructor_only():
    """A dict literal with "code" and "severity" keys outside results.py is a finding built by
    hand: its keys or its severity could drift from what the views and --json readers expect."""
    by_hand = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in (CONSTRUCTOR, *NOT_YET):
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Dict) and {"code", "severity"} <= _keys(node):
                by_hand.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert not by_hand, "build findings with engines.results.finding(): " + ", ".join(by_hand)


def test_the_constructor_gives_the_finding_every_reader_expects():
    from eagle3_tui.engines.results import blocking, finding, sort_findings

    made = finding("slot_mismatch", "warning", "A slot 1 is B slot 2", slot=1, paths=["a.pt"])
    assert made == {"code": "slot_mismatch", "severity": "warning", "message": "A slot 1 is B slot 2",
                    "slot": 1, "paths": ["a.pt"]}
    assert list(made)[:3] == ["code", "severity", "message"]
    note = finding("slot_ambiguous", "info", "two boundaries match")
    assert sort_findings([note, made]) == [made, note] and blocking([made]) and not blocking([note])


def _functions(path: Path) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[f"{node.name}.{item.name}"] = item
    return found


def test_entry_points_and_sources_name_their_result_type():
    wrong = []
    functions: dict[str, dict] = {}
    for (module, name), kind in ANNOTATED.items():
        if module not in functions:
            functions[module] = _functions(PACKAGE / module)
        node = functions[module].get(name)
        got = ast.unparse(node.returns) if node is not None and node.returns is not None else None
        if got != kind:
            wrong.append(f"{module} {name}: {got} (want {kind})")
    assert not wrong, "; ".join(wrong)


def test_the_result_types_are_the_ones_the_engines_build():
    """The types name the keys the engines write: a renamed key shows up here, not in a view."""
    from eagle3_tui.engines import results

    assert {"path", "tokens", "k", "slots", "final", "signature", "fingerprint", "error",
            "not_sample", "cached", "computed"} <= set(results.ScanRecord.__annotations__)
    assert set(results.SlotRecord.__annotations__) == {"norm_mean", "norm_bulk", "norm_max", "nan", "inf",
                                                       "first_nonfinite_row"}
    assert {"a", "b", "alignment", "findings", "error"} <= set(results.ComparisonResult.__annotations__)
    assert {"slots", "final", "conventions", "findings", "error"} <= set(results.IdentifyResult.__annotations__)
    assert {"top1", "steps", "tau", "per_token", "error"} <= set(results.AcceptResult.__annotations__)
    assert not hasattr(results, "Comparison")  # the compare engine's class keeps that name


def test_every_scan_record_field_is_in_the_type_and_the_view_keeps_it(tmp_path):
    """A real tree (samples, a NaN, a non-sample, a vocabulary mapping, a dead link, a README):
    every key of every record is a ScanRecord field, so the dataset view, whose Record takes its
    fields from the type, keeps all of them but the few only the CLI's report reads."""
    from eagle3_tui.engines.results import ScanRecord, SlotRecord
    from eagle3_tui.engines.scan.records import scan_tree
    from eagle3_tui.ui.dataset.model import _NOT_KEPT, Record
    from tests.helpers.tree import make_tree

    root = make_tree(tmp_path / "data")
    records = list(scan_tree(str(root), workers=1))
    assert {"error", "not_sample"} <= {k for r in records for k in r}  # the odd files are in
    fields = set(ScanRecord.__annotations__)
    for r in records:
        assert set(r) <= fields, (r["path"], set(r) - fields)
        for part in [*r.get("slots", ()), *([r["final"]] if r.get("final") else [])]:
            assert set(part) <= set(SlotRecord.__annotations__), r["path"]
        kept = Record(r)
        assert {k for k in r if k not in _NOT_KEPT} == {k for k in fields if k in kept}, r["path"]
