"""The package's import graph: no cycles between modules (imports inside functions count too),
and each layer imports only downward (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "eagle3_tui"

FEATURES = ("main", "compare", "dataset", "bookmarks", "sample", "browser")

#: layer -> what it must never import (package prefixes or third-party top-level names)
FORBIDDEN = {
    # shipped to the box: nothing above them, nothing of this machine's dataset or demo
    "eagle3_tui.engines": ("eagle3_tui.sources", "eagle3_tui.bookmarks", "eagle3_tui.ui", "eagle3_tui.commands",
                           "eagle3_tui.cli", "eagle3_tui.dataset", "eagle3_tui.demo", "textual", "asyncssh",
                           "rich"),
    "eagle3_tui.sources": ("eagle3_tui.bookmarks", "eagle3_tui.ui", "eagle3_tui.commands", "eagle3_tui.cli",
                           "textual", "rich"),
    "eagle3_tui.bookmarks": ("eagle3_tui.ui", "eagle3_tui.commands", "eagle3_tui.cli", "textual", "asyncssh",
                             "rich", "torch"),
    "eagle3_tui.demo": ("eagle3_tui.sources", "eagle3_tui.bookmarks", "eagle3_tui.ui", "eagle3_tui.commands",
                        "eagle3_tui.cli", "eagle3_tui.dataset", "textual", "asyncssh", "rich"),
    "eagle3_tui.dataset": ("eagle3_tui.ui", "eagle3_tui.commands", "eagle3_tui.cli", "eagle3_tui.bookmarks",
                           "textual", "rich"),
    # what a view shows as Markdown and JSON (e / y): built from the result dicts, plain Python
    "eagle3_tui.reports": ("eagle3_tui.sources", "eagle3_tui.bookmarks", "eagle3_tui.ui", "eagle3_tui.commands",
                           "eagle3_tui.cli", "eagle3_tui.dataset", "eagle3_tui.demo", "textual", "asyncssh",
                           "rich", "torch"),
    "eagle3_tui.ui": ("eagle3_tui.commands", "eagle3_tui.cli"),
    # the UI's feature folders: the app opens the main screen, which opens the views; the panes
    # and what every feature shares know none of them (pyproject's "UI features" contract)
    "eagle3_tui.ui.shared": tuple(f"eagle3_tui.ui.{f}" for f in (*FEATURES, "start", "app", "help", "palette")),
    "eagle3_tui.ui.start": tuple(f"eagle3_tui.ui.{f}" for f in (*FEATURES, "app")),
    "eagle3_tui.ui.sample": tuple(f"eagle3_tui.ui.{f}" for f in FEATURES if f != "sample") + ("eagle3_tui.ui.app",),
    "eagle3_tui.ui.browser": tuple(f"eagle3_tui.ui.{f}" for f in FEATURES if f != "browser") + ("eagle3_tui.ui.app",),
    "eagle3_tui.ui.compare": ("eagle3_tui.ui.main", "eagle3_tui.ui.dataset", "eagle3_tui.ui.bookmarks", "eagle3_tui.ui.app"),
    "eagle3_tui.ui.dataset": ("eagle3_tui.ui.main", "eagle3_tui.ui.compare", "eagle3_tui.ui.bookmarks", "eagle3_tui.ui.app"),
    "eagle3_tui.ui.bookmarks": ("eagle3_tui.ui.main", "eagle3_tui.ui.compare", "eagle3_tui.ui.dataset", "eagle3_tui.ui.app"),
    "eagle3_tui.ui.main": ("eagle3_tui.ui.app",),
}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """Every module (of the package, or a top-level third-party name) that `path` imports,
    wherever the import statement sits (module level, function, TYPE_CHECKING block excluded)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()

    def type_checking(node: ast.If) -> bool:
        test = node.test
        return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and type_checking(child):
                for sub in child.orelse:
                    visit(sub)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.add(alias.name)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    stem = ".".join(base + ([child.module] if child.module else []))
                else:
                    stem = child.module or ""
                found.add(stem)
                for alias in child.names:  # `from pkg import module`
                    if f"{stem}.{alias.name}" in modules:
                        found.add(f"{stem}.{alias.name}")
            visit(child)

    visit(tree)
    return found


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    out = {}
    for name, path in files.items():
        deps = set()
        for imp in imports_of(path, modules):
            # `import eagle3_tui.x.y` names the package too; keep the deepest module it names
            if imp in modules and imp != name:
                deps.add(imp)
        out[name] = deps
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            strong(v)
    return out


def test_no_import_cycles():
    g = graph()
    # a package's __init__ re-exporting its modules is not a cycle of ideas
    for name in g:
        g[name] = {d for d in g[name] if not name.startswith(d + ".")}
    assert cycles(g) == []


def test_layers_import_downward_only():
    bad = []
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        for layer, forbidden in FORBIDDEN.items():
            if name == layer or name.startswith(layer + "."):
                for imp in imports_of(path, set()):
                    if any(imp == f or imp.startswith(f + ".") for f in forbidden):
                        bad.append(f"{name} imports {imp}")
    assert bad == []
