"""The remote agent is sent the code its requests run, and only that."""

from __future__ import annotations

import ast
import sys

from eagle3_tui.sources.shipping import package_imports, shipped_modules


def test_the_agent_receives_what_its_requests_import_and_not_the_demo():
    shipped = shipped_modules()
    assert {"eagle3_tui.engines.read.stats", "eagle3_tui.engines.compare", "eagle3_tui.engines.read.load",
            "eagle3_tui.engines.read.schema", "eagle3_tui.engines.live.vllm_engine"} <= set(shipped)
    # the demo data maker and its transformer are for this machine's demo and tests
    assert "eagle3_tui.demo.dataset" not in shipped
    assert "eagle3_tui.demo.model" not in shipped
    # nothing of the UI, the SSH client or the bookmarks goes to the box
    assert not [m for m in shipped if m.startswith(("eagle3_tui.ui", "eagle3_tui.sources", "eagle3_tui.bookmarks"))]


def test_every_shipped_module_imports_only_shipped_code_torch_and_the_standard_library():
    shipped = shipped_modules()
    allowed_third_party = {"torch"}
    for name, (is_package, source) in shipped.items():
        ours = package_imports(source, name, is_package)
        missing = {m for m in ours if m not in shipped and not _is_attribute(m, shipped)}
        assert not missing, f"{name} imports {missing}, which the agent is not sent"
        for node in ast.walk(ast.parse(source)):
            tops = []
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                tops = [node.module.split(".")[0]]
            for top in tops:
                if top == "eagle3_tui" or top in allowed_third_party or top in sys.stdlib_module_names:
                    continue
                # optional extras, present on a box that serves the model (ray: a box that runs
                # its own Ray cluster, `scan box:/data --ray`; imported only for such a scan; vllm:
                # in the program serve-check --live sends to the engine's own Python, never imported
                # by the agent itself)
                assert top in {"transformers", "tokenizers", "ray"} or (top == "vllm" and name.endswith("vllm_engine")), \
                    f"{name} imports {top}"


def _is_attribute(name: str, shipped: dict) -> bool:
    return name.rpartition(".")[0] in shipped
