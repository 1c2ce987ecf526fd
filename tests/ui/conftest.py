"""Fixtures for the TUI tests: real seeded torch files in real folders, and the demo dataset
(real transformer states, known faults) for the compare view. Driving the app is
tests/helpers/tui.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers import warm_cli
from tests.helpers.demo_world import demo_once
from tests.helpers.tree import make_tree, write_specforge
from tests.helpers.tui import patient_pilot


@pytest.fixture(autouse=True, scope="session")
def _patient_pilot():
    """Textual's wait after each key gets the tests' one ceiling (tests/helpers/tui.py)."""
    patient_pilot()


@pytest.fixture(autouse=True)
def _warm_findings_child(request, monkeypatch):
    """The dataset view's findings child (`python -m eagle3_tui.dataset.layer_group`,
    dataset/findings_child.py) forks from the warm interpreter (tests/helpers/warm_cli.py): the
    same separate process on the same files, without the ~2 s of importing torch each scan in a
    view paid. A module about that child itself sets REAL_FINDINGS_CHILD = True and gets real ones."""
    if getattr(request.module, "REAL_FINDINGS_CHILD", False):
        return
    from eagle3_tui.dataset import findings_child

    monkeypatch.setattr(findings_child, "subprocess",
                        SimpleNamespace(Popen=warm_cli.Popen, TimeoutExpired=subprocess.TimeoutExpired))


@pytest.fixture(scope="session")
def tree(tmp_path_factory) -> Path:
    return make_tree(tmp_path_factory.mktemp("tree"))


@pytest.fixture(scope="session")
def many_samples(tmp_path_factory) -> Path:
    """A folder with a sub-folder first (so nothing loads at start) and 60 sample files."""
    root = tmp_path_factory.mktemp("many")
    (root / "aaa").mkdir()
    first = write_specforge(root / "data_0.ckpt", tokens=16, hidden=16)
    for i in range(1, 60):
        shutil.copyfile(first, root / f"data_{i}.ckpt")
    return root


@pytest.fixture(scope="session")
def big_folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("big")
    for i in range(3000):
        (root / f"data_{i}.ckpt").touch()
    return root


@pytest.fixture(scope="session")
def demo(tmp_path_factory, untouched) -> Path:
    root, manifest = demo_once(tmp_path_factory, untouched)
    assert manifest["infer"], "the demo lists its inference captures"
    return root


@pytest.fixture(scope="session")
def demo_drafter(tmp_path_factory, untouched) -> Path:
    """The demo with its trained drafter (drafter/)."""
    return demo_once(tmp_path_factory, untouched, drafter=True)[0]
