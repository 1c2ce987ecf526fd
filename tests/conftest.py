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


def _quicker_pilot_idle() -> None:
    """Pilot.press() and pause() wait, after each key, until a 20 ms window passes in which the
    whole process spent under 5 % of it on the CPU (textual._wait.wait_for_idle): 40 ms a key at
    least, ~115 s of the UI tests' time in all. Here the window is 10 ms, at the same 5 %. What a
    test checks it should wait for (tests/helpers/tui.wait_until), not for the process to look
    idle. A 5 ms window showed three tests that did not (changed); at 2 ms a few more still fail,
    so 10 ms, half of Textual's own, keeps a margin."""
    import textual._wait as wait

    assert isinstance(wait.SLEEP_GRANULARITY, float) and isinstance(wait.SLEEP_IDLE, float), "textual changed"
    wait.SLEEP_GRANULARITY = 0.01
    wait.SLEEP_IDLE = wait.SLEEP_GRANULARITY / 20


_quicker_pilot_idle()

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
