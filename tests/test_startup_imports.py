"""Start-up stays cheap: importing the package and `--help` never import torch (about 1.4 s)."""

from __future__ import annotations

import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print('@@MODULES@@'); print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.split("@@MODULES@@")[-1].split())


def test_import_package_does_not_import_torch():
    mods = _modules_after("import eagle3_tui, eagle3_tui.cli, eagle3_tui.engines.read.sample")
    assert "eagle3_tui.cli" in mods
    assert "torch" not in mods


def test_help_does_not_import_torch():
    code = (
        "import sys\n"
        "from eagle3_tui.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "for name in ('summary', 'ls', 'compare', 'bookmarks', 'demo'):\n"
        "    try:\n        main([name, '--help'])\n    except SystemExit:\n        pass\n"
    )
    mods = _modules_after(code)
    assert "eagle3_tui.commands.summary" in mods
    assert "torch" not in mods
    assert "textual" not in mods


def test_core_never_imports_textual_or_asyncssh():
    """engines/ is shipped to the GPU box: torch and the standard library only."""
    code = (
        "import eagle3_tui.engines.read.load, eagle3_tui.engines.read.stats, eagle3_tui.engines.read.schema\n"
        "import eagle3_tui.sources.base, eagle3_tui.sources.local\n"
    )
    mods = _modules_after(code)
    assert not {"textual", "asyncssh", "numpy"} & mods


def test_the_tuis_first_frame_imports_no_scan_engine():
    """What the browser and the sample view need at start-up, not the scan, its findings or
    identify's forward (with them the first frame took 1.3-1.4x a bare Textual app's, against
    1.0-1.2x without; bench_tui tui_first_frame)."""
    mods = _modules_after("import eagle3_tui.commands.tui, eagle3_tui.ui.app, eagle3_tui.ui.start.analysis")
    assert "eagle3_tui.ui.main.screen" in mods and "eagle3_tui.ui.sample.view" in mods
    late = {"eagle3_tui.engines.scan.records", "eagle3_tui.dataset.findings", "eagle3_tui.engines.model.identify_run",
            "eagle3_tui.engines.read.stats"}
    assert not late & mods, sorted(late & mods)
