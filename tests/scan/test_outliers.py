"""A minority captured at other layers is named with its files whether it is a run in index
order or scattered among conversation-id names, and clean datasets stay silent (issue 23)."""

from __future__ import annotations

import json
import random

import pytest

from eagle3_tui.cli import main
from tests.helpers.outlier_world import copy_set, modelopt_set, replant, specforge_set

# its datasets are built once: the module's tests share one xdist worker
pytestmark = pytest.mark.xdist_group("scan-outliers")

LAYER_CODES = ("layer_group", "signature_outliers")


def _findings(capsys, root) -> list[dict]:
    main(["scan", str(root), "--json", "--no-cache", "--workers", "1"])
    return json.loads(capsys.readouterr().out.splitlines()[-1])["findings"]


def _named(findings, root) -> set[str]:
    """Every file a layer finding names, as names relative to root."""
    return {p for f in findings if f["code"] in LAYER_CODES for p in f["paths"]}


@pytest.fixture(scope="module")
def conversations(tmp_path_factory):
    root = tmp_path_factory.mktemp("modelopt") / "base"
    modelopt_set(root, 300, seed=3)
    return root


@pytest.mark.parametrize("n, share", [(300, 0.01), (100, 0.03), (100, 0.10)])
def test_a_scattered_minority_among_conversation_ids_is_named_exactly(conversations, tmp_path, capsys, n, share):
    root = tmp_path / "data"
    root.mkdir()
    files = sorted(conversations.iterdir())[:n]
    for f in files:
        (root / f.name).write_bytes(f.read_bytes())
    odd = random.Random(n).sample([f.name for f in files], round(n * share))
    for name in odd:
        replant(root / name, +1)
    found = _findings(capsys, root)
    outliers = [f for f in found if f["code"] == "signature_outliers"]
    assert _named(found, root) == set(odd), [f["message"] for f in found]
    assert len(outliers) == 1 and outliers[0]["severity"] == "warning"
    assert min(outliers[0]["scores"]) > outliers[0]["threshold"]
    assert "stand apart from the bulk" in outliers[0]["message"]


def test_two_different_minorities_are_two_groups(conversations, tmp_path, capsys):
    root = tmp_path / "data"
    root.mkdir()
    files = sorted(conversations.iterdir())[:120]
    for f in files:
        (root / f.name).write_bytes(f.read_bytes())
    names = random.Random(9).sample([f.name for f in files], 10)
    deeper, shallower = set(names[:5]), set(names[5:])
    for name in deeper:
        replant(root / name, +1)
    for name in shallower:
        replant(root / name, -1)
    groups = [set(f["paths"]) for f in _findings(capsys, root) if f["code"] == "signature_outliers"]
    assert sorted(groups, key=len) == sorted([deeper, shallower], key=len) or set(map(frozenset, groups)) == {
        frozenset(deeper), frozenset(shallower)}


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    root = tmp_path_factory.mktemp("specforge") / "base"
    files = specforge_set(root, seed=4)
    return root, files


@pytest.mark.parametrize("length", [2, 8])
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_a_run_is_named_with_its_exact_edges(shards, tmp_path, capsys, length, where):
    """Runs at a shard's start, middle and end (shard rows_16-32): every file of the run and no
    other, whether the change point (layer_group) or the outlier score names it. (A run of one
    file is told from an unusual prompt by identifying it: tests/scan/test_verify.py.)"""
    base, files = shards
    root = copy_set(base, tmp_path / "data")
    first = {"start": 16, "middle": 20, "end": 32 - length}[where]
    planted = set()
    for i in range(first, first + length):
        path = root / files[i].relative_to(base)
        replant(path, +1)
        planted.add(str(files[i].relative_to(base)))
    found = _findings(capsys, root)
    assert _named(found, root) == planted, [(f["code"], f.get("paths")) for f in found]


@pytest.mark.parametrize("seed", range(6))
def test_clean_datasets_raise_no_layer_finding(tmp_path, capsys, seed):
    """Six seeds in each layout: the false alarms counted here are the stated rate's evidence."""
    conv = tmp_path / "modelopt"
    modelopt_set(conv, 48, seed=100 + seed)
    sf = tmp_path / "specforge"
    specforge_set(sf, shards=3, per_shard=12, seed=200 + seed)
    for root in (conv, sf):
        found = _findings(capsys, root)
        assert not [f for f in found if f["code"] in LAYER_CODES], [f["message"] for f in found]
        assert not [f for f in found if f["severity"] != "info"], [f["message"] for f in found]
