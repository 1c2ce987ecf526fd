"""Ray is an optional extra: `scan` without --ray never imports it (checked like the torch-free
start-up), and --ray without it says in one line how to install it."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=300)


def test_scan_without_ray_flag_never_imports_ray(clean):
    code = (
        "import sys\n"
        "from eagle3_tui.cli import main\n"
        f"rc = main(['scan', {str(clean)!r}, '--json', '--no-cache'])\n"
        "try:\n    main(['scan', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('@@', rc, 'torch' in sys.modules, sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    out = _run(code)
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert last == "@@ 0 True []"  # the scan ran (torch came), Ray never did


def test_ray_flag_without_ray_says_how_to_install_it(clean):
    code = (
        "import sys\n"
        "sys.modules['ray'] = None  # as if the extra were not installed: `import ray` fails\n"
        "from eagle3_tui.cli import main\n"
        f"sys.exit(main(['scan', {str(clean)!r}, '--ray']))\n"
    )
    out = _run(code)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == 'eagle3-tui: scan: --ray: Ray is not installed here: pip install "eagle3-tui[ray]"\n'


def test_ray_options_need_ray(clean):
    out = subprocess.run([sys.executable, "-m", "eagle3_tui", "scan", str(clean), "--ray-local-roots"],
                         check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr == "eagle3-tui: scan: --ray-local-roots and --ray-batch go with --ray\n"
