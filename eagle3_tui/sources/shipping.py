"""Which of the package's modules the remote agent needs: those that sources/agent.py imports,
and what they import in turn (imports inside functions count), found by reading the source.

So the box receives the code its requests run (load, schema, stats, compare, ...), not the demo
data maker or the model that only the demo and the tests use; a new agent op that imports a new
module ships it without a list to keep up to date.
"""

from __future__ import annotations

import ast
import functools
from importlib import resources

PACKAGE = "eagle3_tui"


def _source_of(module: str) -> tuple[bool, str] | None:
    """(is_package, source text) of a module of this package, or None if it does not exist."""
    parts = module.split(".")
    folder = resources.files(PACKAGE)
    for part in parts[1:-1]:
        folder = folder.joinpath(part)
    last = parts[-1] if len(parts) > 1 else None
    if last is None:
        return True, folder.joinpath("__init__.py").read_text("utf-8")
    as_package = folder.joinpath(last, "__init__.py")
    if as_package.is_file():
        return True, as_package.read_text("utf-8")
    as_module = folder.joinpath(last + ".py")
    if as_module.is_file():
        return False, as_module.read_text("utf-8")
    return None


def package_imports(source: str, module: str, is_package: bool) -> set[str]:
    """Names of this package's modules that `source` imports anywhere (candidates: a name in
    `from x import y` may be a module x.y or an attribute of x; the caller checks)."""
    here = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            found.add(stem)
            found.update(f"{stem}.{a.name}" for a in node.names)
    return {name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")}


@functools.cache
def shipped_modules() -> dict[str, list]:
    """{module name: [is_package, source]}: the closure of the agent's own imports, with the
    packages that contain them."""
    agent = resources.files(f"{PACKAGE}.sources").joinpath("agent.py").read_text("utf-8")
    todo = sorted(package_imports(agent, f"{PACKAGE}.sources.agent", False))
    modules: dict[str, list] = {}
    while todo:
        name = todo.pop()
        if name in modules:
            continue
        found = _source_of(name)
        if found is None:
            continue  # an attribute imported from a module, not a module
        modules[name] = list(found)
        todo += sorted(package_imports(found[1], name, found[0]))
        parent = name.rpartition(".")[0]
        if parent:
            todo.append(parent)
    return dict(sorted(modules.items()))
