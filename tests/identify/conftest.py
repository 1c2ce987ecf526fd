"""The identify tests' world (tests/helpers/identify_world.py) and a remote Python without
transformers; the SSH servers are the shared plugin tests/helpers/ssh.py.
"""

from __future__ import annotations

import sys

import pytest

from tests.helpers.autouse import _no_ssh_agent, _one_torch_thread  # noqa: F401 - autouse fixtures
from tests.helpers.identify_world import World


@pytest.fixture(scope="session")
def world(tmp_path_factory) -> World:
    return World(tmp_path_factory.mktemp("identify"))


@pytest.fixture(scope="session")
def python_without_transformers(tmp_path_factory) -> str:
    """The test Python (torch included) with transformers made unimportable by a sitecustomize,
    as a `--remote-python` shell fragment (the setting allows `conda run ...`-style commands)."""
    site = tmp_path_factory.mktemp("no-transformers")
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['transformers'] = None\n")
    return f"env PYTHONPATH={site} {sys.executable}"
