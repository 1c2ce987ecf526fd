"""The structure a newcomer relies on, read from the files (issue 45): the engines return declared
shapes (at most 80 open `dict[str, Any]` left in the package, for JSON whose keys nobody fixes:
a model's config.json, a safetensors header, a reply line), mypy and ruff are configured over the
whole package and CI runs both, the layer rules have one home, and ARCHITECTURE.md maps every folder
the package has. Mixins and double inheritance: tests/test_class_names.py and
tests/compare/test_structure.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "eagle3_tui"


def test_open_dicts_stay_few():
    where = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
             if (n := p.read_text().count("dict[str, Any]"))}
    assert sum(where.values()) <= 80, sorted(where.items(), key=lambda kv: -kv[1])[:10]


def test_mypy_and_ruff_cover_the_package_and_ci_runs_them():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["mypy"]["files"] == ["eagle3_tui"]
    assert {"F", "I", "B", "E4", "E7", "E9"} <= set(config["tool"]["ruff"]["lint"]["select"])
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "mypy" in ci and "ruff check eagle3_tui" in ci and "lint-imports" in ci


def test_the_layer_rules_live_in_the_contracts_alone():
    """No test keeps its own table of the package's layers (tests/test_layers.py had a FORBIDDEN
    table that had drifted from the contracts): a dict whose keys name two or more top folders."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert any(c["type"] == "layers" for c in config["tool"]["importlinter"]["contracts"])
    top = re.compile(r"eagle3_tui\.(cli|commands|ui|dataset|bookmarks|sources|reports|demo|engines)")
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                names = {k.value for k in node.keys if isinstance(k, ast.Constant)
                         and isinstance(k.value, str) and top.fullmatch(k.value)}
                assert len(names) < 2, f"{path}:{node.lineno}: a second copy of the layer rules {sorted(names)}"


def test_architecture_maps_every_folder_and_the_readme_points_to_it():
    arch = (ROOT / "ARCHITECTURE.md").read_text()
    folders = [p for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
    folders += [p for p in (PACKAGE / "engines").iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
    missing = [str(p.relative_to(PACKAGE)) for p in folders if f"{p.name}/" not in arch]
    assert not missing, f"ARCHITECTURE.md's code map lacks {missing}"
    for invariant in ("weights_only", "never writes", "first frame"):
        assert invariant in arch, invariant
    assert "](ARCHITECTURE.md)" in (ROOT / "README.md").read_text()


#: the sizes the code keeps (issue 58): past them a module holds two ideas, a function two steps
MODULE_LINES = 450
FUNCTION_LINES = 80


def test_no_module_or_function_outgrows_its_idea():
    big = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        rel = path.relative_to(ROOT)
        if (n := text.count("\n")) > MODULE_LINES:
            big.append(f"{rel}: {n} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if (n := node.end_lineno - first + 1) > FUNCTION_LINES:
                    big.append(f"{rel}:{node.lineno} {node.name}: {n} lines")
    assert not big, "; ".join(big)
