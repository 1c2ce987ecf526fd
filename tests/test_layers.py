"""What the layer contracts cannot say. The layers themselves (who may import whom) live in one
place, pyproject.toml's import-linter contracts, explained in ARCHITECTURE.md; this file runs them
and adds what they cannot express: no import cycle between modules (imports inside functions
count too), and the remote agent's own rule (sources/agent.py runs on the box's bare Python: the
standard library at module level, and only the shipped engines inside its handlers; what those
import in turn is tests/test_shipping.py's)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "eagle3_tui"


def module_name(path: Path, root: Path = PACKAGE.parent) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, modules: set[str], root: Path = PACKAGE.parent) -> set[str]:
    """Every module (of the package, or a top-level third-party name) that `path` imports,
    wherever the import statement sits (module level, a function, a TYPE_CHECKING block: a
    type-only import still ties the two modules' meaning together, so it closes a cycle too)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    me = module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
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
    """Not even through a TYPE_CHECKING block or a package's __init__ (reports/model.py once named
    the union of the reports that all import it; serving/table.py imported its engines through
    the package whose __init__ imports table)."""
    assert cycles(graph()) == []


def test_a_type_only_cycle_is_found(tmp_path):
    """The cycle finder sees an import under `if TYPE_CHECKING:`, the kind lint-imports skips."""
    model = tmp_path / "eagle3_tui" / "reports" / "model.py"
    model.parent.mkdir(parents=True)
    model.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sample import X\n")
    assert "eagle3_tui.reports.sample" in imports_of(model, {"eagle3_tui.reports.sample"}, tmp_path)
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]


def test_the_import_linter_contracts_are_kept():
    out = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                          "sys.exit(lint_imports(no_cache=True, no_logo=True))"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]


def test_no_contract_ignores_an_import():
    """Every layer holds without exceptions: an import that needs one moves down instead."""
    lines = (ROOT / "pyproject.toml").read_text().splitlines()
    assert [line for line in lines if line.strip().startswith("ignore_imports")] == []


def test_the_agent_imports_the_standard_library_and_the_shipped_engines_only():
    path = PACKAGE / "sources" / "agent.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    bad = []
    for node in ast.walk(tree):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        for name in names:
            top = name.split(".")[0]
            inside = node not in tree.body
            if top in sys.stdlib_module_names or (inside and name.startswith("eagle3_tui.engines")):
                continue
            bad.append(f"line {node.lineno}: {name}" + ("" if inside else " (at module level)"))
    assert bad == []
