"""Autouse fixtures that a test area opts into by importing them into its conftest.py (they are
not in the global plugins: a fixture that changes the process or the environment stays with the
areas that want it)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """Tiny tensors: a second intra-op thread only adds contention on a busy 2-core box."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def _no_ssh_agent(monkeypatch):
    """A developer's running ssh-agent must not decide whether a login works."""
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
