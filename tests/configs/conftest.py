"""The configs tests' folders: a model, a drafter and a tokenizer that fit each other
(tests/helpers/folder_world.py), built once per session."""

from __future__ import annotations

import pytest

from tests.helpers.autouse import _no_ssh_agent, _one_torch_thread  # noqa: F401 - autouse fixtures
from tests.helpers.folder_world import Folders


@pytest.fixture(scope="session")
def folders(tmp_path_factory) -> Folders:
    return Folders(tmp_path_factory.mktemp("configs"))
