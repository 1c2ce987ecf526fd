from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory):
    """One demo dataset (seed 0) shared by the demo tests: writing it takes about 1.5 s."""
    from eagle3_tui.samples.demo import write_demo

    d = tmp_path_factory.mktemp("demo") / "eagle3-demo"
    manifest = write_demo(str(d), seed=0)
    return d, manifest


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """Tiny tensors: a second intra-op thread only adds contention on a busy 2-core box."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
