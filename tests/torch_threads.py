"""A session fixture for test areas that run many tiny tensor ops (compare, demo)."""

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
