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


def test_no_class_below_the_ui_inherits_from_two_of_ours():
    """A class outside ui/ has at most one base class defined in the package (an error is one kind
    of error, a step one object): the except clauses that catch it say so by name. The UI's
    widgets may mix in Textual's classes and their own."""
    ours = set()
    trees = {}
    for path in sorted((ROOT / "eagle3_tui").rglob("*.py")):
        trees[path] = ast.parse(path.read_text(), filename=str(path))
        ours |= {name.rsplit(".", 1)[-1] for name, _ in _classes(trees[path])}
    mixed = []
    for path, tree in trees.items():
        if (ROOT / "eagle3_tui" / "ui") in path.parents:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else None
                         for b in node.bases]
                if len([b for b in bases if b in ours]) > 1:
                    mixed.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}({', '.join(map(str, bases))})")
    assert not mixed, f"classes below the UI with two bases of ours: {mixed}"
