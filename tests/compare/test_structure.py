"""compare's steps are objects the Comparison owns, not mixins sharing state through self: no class
in engines/compare inherits from more than one class (read from the source: no torch here)."""

from __future__ import annotations

import ast
from pathlib import Path

COMPARE = Path(__file__).resolve().parent.parent.parent / "eagle3_tui" / "engines" / "compare"


def test_no_compare_class_inherits_from_two_classes():
    mixed = []
    for path in sorted(COMPARE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and len(node.bases) > 1:
                mixed.append(f"{path.name}:{node.lineno} {node.name}")
    assert not mixed, mixed


def test_the_comparison_owns_an_aligner_a_measurer_and_a_judge():
    tree = ast.parse((COMPARE / "run.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Comparison")
    assert not cls.bases
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    made = {n.value.func.id for n in ast.walk(init)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name)}
    assert {"Aligner", "Measurer", "Judge"} <= made
