"""Issue 44, item 4: the findings cache is keyed on the code the findings really run. The modules
are derived from dataset.findings' imports (dataset/cache.py imported_modules); every module that
computing the findings loads must be among them, and a change to outliers.py or norm_scale.py
(left out of the key before) gives another key."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from eagle3_tui.dataset.cache import imported_modules
from eagle3_tui.engines.scan.records import scan_tree
from tests.helpers.processes import subprocess_env

ROOT = Path(__file__).resolve().parents[2]

_LOADED = """
import json, sys
from eagle3_tui.dataset.findings import dataset_findings
found = dataset_findings(json.load(open(sys.argv[1])))
assert found is not None
print(json.dumps(sorted(m for m, mod in sys.modules.items() if m.startswith("eagle3_tui.")
                        and not getattr(mod, "__path__", None))))
"""


def _python(code: str, *args: str, package_root: Path = ROOT, cwd: Path | None = None) -> str:
    """stdout of `python -c code args` with eagle3_tui imported from `package_root`."""
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd,
                       env={**subprocess_env(), "PYTHONPATH": str(package_root)}, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def _loaded(code: str, *args: str) -> set[str]:
    """The package modules (below eagle3_tui) that `code` printed as loaded."""
    return {m.removeprefix("eagle3_tui.") for m in json.loads(_python(code, *args))}


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "eagle3_tui", tmp_path / "pkg" / "eagle3_tui")
    return tmp_path / "pkg"


def test_every_module_the_findings_load_is_in_their_cache_key(planted, tmp_path):
    records = tmp_path / "records.json"
    records.write_text(json.dumps(list(scan_tree(str(planted), workers=1))))
    loaded = _loaded(_LOADED, str(records))
    assert {"dataset.outliers", "dataset.norm_scale", "dataset.layer_group"} <= loaded
    assert loaded - set(imported_modules("dataset.findings")) == set()


_DIGEST = "from eagle3_tui.dataset.cache import ScanCache; print(ScanCache.digest([]))"


def test_a_change_to_outliers_or_norm_scale_is_another_findings_key(tmp_path):
    pkg = _copy(tmp_path)
    before = _python(_DIGEST, package_root=pkg, cwd=tmp_path)
    assert before == _python(_DIGEST, cwd=tmp_path)
    for module in ("outliers", "norm_scale"):
        source = pkg / "eagle3_tui" / "dataset" / f"{module}.py"
        text = source.read_text()
        source.write_text(text + "\n# a constant changed\n")
        assert _python(_DIGEST, package_root=pkg, cwd=tmp_path) != before, module
        source.write_text(text)


_RECORDS_LOADED = """
import json, sys
from eagle3_tui.engines.scan.records import scan_tree
list(scan_tree(sys.argv[1], workers=1))
print(json.dumps(sorted(m for m, mod in sys.modules.items() if m.startswith("eagle3_tui.engines.")
                        and not getattr(mod, "__path__", None))))
"""


def test_every_engine_module_a_scan_loads_is_in_the_record_cache_key(planted):
    """A hand-kept list of the record's modules left out engines/read/torch_zip.py, the quick scan's
    own reader: a change there served records of the old code from the cache."""
    loaded = _loaded(_RECORDS_LOADED, str(planted))
    assert "engines.read.torch_zip" in loaded
    assert loaded - set(imported_modules("engines.scan.records")) == set()


_MODE = "from eagle3_tui.dataset.cache import mode_name; print(mode_name(False, 11))"


def test_a_change_to_the_zip_reader_is_another_record_version(tmp_path):
    pkg = _copy(tmp_path)
    before = _python(_MODE, package_root=pkg, cwd=tmp_path)
    assert before == _python(_MODE, cwd=tmp_path)
    source = pkg / "eagle3_tui" / "engines" / "read" / "torch_zip.py"
    source.write_text(source.read_text() + "\n# a constant changed\n")
    assert _python(_MODE, package_root=pkg, cwd=tmp_path) != before
