"""A Python whose torch is, by every sign a user's environment shows, torch 2.5.1 (a pytest plugin).

No torch below 2.10 can be installed here (no internet, one wheel), so the old release is
presented the way an older install presents itself: a venv that imports this Python's packages
(the real torch runs; from a venv too, as the README's test command runs) whose site-packages holds

- torch-2.5.1+cpu.dist-info: the installed metadata says 2.5.1 (what pip list, importlib.metadata
  and the agent's hello read), ahead of the real torch's on sys.path;
- a .pth line that, once torch is imported, sets torch.__version__ to 2.5.1+cpu (what the module
  reports at run time) and wraps torch.load so that every call is written to a log file next to
  it: the test's observable that nothing was ever unpickled by that Python.

The tests run the CLI with that Python here, and point --remote-python at it over real sshd.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

OLD = "2.5.1+cpu"

_SHIM = textwrap.dedent('''\
    """Makes the real torch present itself as torch {old} (see tests/helpers/old_torch.py)."""
    import importlib.abc
    import importlib.machinery
    import os
    import sys

    LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_load_calls.log")


    def _age(torch):
        from torch.torch_version import TorchVersion

        torch.__version__ = TorchVersion("{old}")
        torch.version.__version__ = torch.__version__
        real = torch.load

        def load(*args, **kwargs):
            with open(LOG, "a") as fh:
                fh.write("torch.load %d\\n" % os.getpid())
            return real(*args, **kwargs)

        torch.load = load


    class _OldTorch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name != "torch":
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None:
                return None
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                _age(module)

            spec.loader.exec_module = exec_module
            return spec


    sys.meta_path.insert(0, _OldTorch())
''')


@dataclass
class OldTorch:
    python: str
    calls_log: Path

    def load_calls(self) -> list[str]:
        """One line per torch.load that Python ran (any process of it) since the log was cleared."""
        return self.calls_log.read_text().splitlines() if self.calls_log.exists() else []

    def clear(self) -> None:
        self.calls_log.unlink(missing_ok=True)


def _site_dirs() -> list[str]:
    """The folders this Python imports installed packages from (torch among them): a venv's own
    site-packages, the system's, the user's. `venv --system-site-packages` would reach only the
    base Python's, which has no torch when the tests run from a venv (a user's on Debian 12)."""
    return [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages") and os.path.isdir(p)]


@pytest.fixture(scope="session")
def old_torch(tmp_path_factory) -> OldTorch:
    venv = tmp_path_factory.mktemp("venv-torch-2.5.1")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # this Python's packages after the venv's own folder (whose dist-info below comes first);
    # addsitedir runs their .pth files too, as they run here
    (site / "zz_this_python.pth").write_text(f"import site; list(map(site.addsitedir, {_site_dirs()!r}))\n")
    (site / "_old_torch_shim.py").write_text(_SHIM.format(old=OLD))
    (site / "old_torch.pth").write_text("import _old_torch_shim\n")
    info = site / f"torch-{OLD}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {OLD}\n")
    (info / "INSTALLER").write_text("pip\n")
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m, torch; print(m.version('torch'), torch.__version__)"],
        capture_output=True, text=True)
    assert probe.stdout.split() == [OLD, OLD], probe.stdout + probe.stderr
    return OldTorch(str(python), site / "torch_load_calls.log")
