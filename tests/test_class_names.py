"""No class name is defined twice in the package: a name found in a traceback, a grep or an import
means one thing. A class nested in another (a widget's Textual message, TokenTable.CursorMoved)
is named with its outer class, as Textual names its handler."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _classes(tree: ast.AST, outer: str = "") -> list[tuple[str, int]]:
    out = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef):
            name = f"{outer}.{node.name}" if outer else node.name
            out.append((name, node.lineno))
            out += _classes(node, name)
        else:
            out += _classes(node, outer)
    return out


def test_no_class_name_is_defined_twice():
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted((ROOT / "eagle3_tui").rglob("*.py")):
        for name, line in _classes(ast.parse(path.read_text(), filename=str(path))):
            where[name].append(f"{path.relative_to(ROOT)}:{line}")
    twice = {name: places for name, places in where.items() if len(places) > 1}
    assert not twice, f"class names defined more than once (rename one, or keep one and import it): {twice}"
