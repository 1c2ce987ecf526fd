"""Fixtures shared by every test area. Area fixtures live in tests/<area>/conftest.py; what
several areas share is in tests/helpers/ (plain modules, imported by name), and its fixture
modules are loaded here as plugins, so no area imports another one's conftest."""

from __future__ import annotations

import os

import pytest

# One intra-op thread for torch in every process of the suite (the xdist workers and whatever they
# start): the suite's parallelism is its workers, one per core, and a second OpenMP thread in each
# process only spins on the core another worker needs (tests/scan ran 10-20% longer with it).
# Before any torch import; the workers and every child inherit it; an explicit setting wins.
os.environ.setdefault("OMP_NUM_THREADS", "1")

pytest_plugins = [
    "tests.helpers.ssh",  # SSH servers on loopback, datasets to serve, `home` and `box`
    "tests.helpers.accept",  # `trained`: a drafter trained on the demo transformer
    "tests.helpers.scan",  # `clean` and `planted` datasets to scan
    "tests.helpers.tokens",  # a BPE tokenizer and chat samples
    "tests.helpers.vocab",  # a draft vocabulary for those chats
    "tests.helpers.real_world",  # the real pretrained target (SmolLM2-135M) and its own chats
    "tests.helpers.old_torch",  # `old_torch`: a Python whose torch presents itself as 2.5.1
]


@pytest.fixture(autouse=True)
def _user_data_in_tmp(tmp_path_factory, monkeypatch):
    """No test may read or write the real user's bookmarks or caches."""
    monkeypatch.setenv("EAGLE3_TUI_DATA_DIR", str(tmp_path_factory.mktemp("user-data")))
    monkeypatch.setenv("EAGLE3_TUI_CACHE_DIR", str(tmp_path_factory.mktemp("user-cache")))
