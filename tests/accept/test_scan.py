"""`scan --drafter`: per-file drafter top-1 next to the data, and the low_acceptance finding."""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import pytest

from eagle3_tui.dataset.findings import dataset_findings
from eagle3_tui.engines.model.accept import accept_file
from eagle3_tui.engines.scan.records import scan_tree
from eagle3_tui.sources.local import LocalSource
from tests.helpers import warm_cli
from tests.helpers.accept import _save_sample
from tests.helpers.drafter import AUX

PERMUTED = [AUX[2], AUX[0], AUX[1]]


@pytest.fixture(scope="module")
def datasets(trained, tmp_path_factory) -> tuple[Path, Path]:
    """clean: 12 training samples of held-out text; mixed: the same, 2 of them permuted captures."""
    rng = random.Random(7)
    seqs = [trained.world.rule_seq(rng, rng.randint(10, 30), 100) for _ in range(12)]
    clean = tmp_path_factory.mktemp("clean")
    mixed = tmp_path_factory.mktemp("mixed")
    for i, seq in enumerate(seqs):
        _save_sample(clean / f"data_{i}.ckpt", seq)
        _save_sample(mixed / f"data_{i}.ckpt", seq, boundaries=PERMUTED if i in (2, 5) else AUX)
    return clean, mixed


def _records(root, **kw):
    return {r["path"]: r for r in scan_tree(str(root), workers=1, **kw)}


def test_full_scan_top1_is_accept_files(trained, datasets):
    _, mixed = datasets
    records = _records(mixed, full=True, drafter=(str(trained.drafter), None))
    assert len(records) == 12
    for rel, r in records.items():
        expected = accept_file(str(mixed / rel), str(trained.drafter), steps=1)
        assert r["accept"]["top1"] == pytest.approx(expected["top1"], abs=1e-6)
        assert r["accept"]["rows"] == expected["rows"] and r["accept"]["prefix"] is None


def test_quick_scan_scores_the_first_loss_rows_exactly(trained, datasets):
    """Quick mode reads a prefix; the drafter's guesses there equal those on the whole file."""
    _, mixed = datasets
    rows = 20
    records = _records(mixed, rows=rows, drafter=(str(trained.drafter), None))
    for rel, r in records.items():
        whole = accept_file(str(mixed / rel), str(trained.drafter), steps=1)["per_token"]
        first = whole[:rows]
        assert r["accept"]["rows"] == rows and r["accept"]["prefix"] < r["valid_tokens"]
        assert r["accept"]["top1"] == pytest.approx(sum(t["hit"] for t in first) / rows, abs=1e-6)


def test_low_acceptance_names_the_permuted_captures(trained, datasets):
    clean, mixed = datasets
    found = [f for f in dataset_findings(list(_records(mixed, drafter=(str(trained.drafter), None)).values()))
             if f["code"] == "low_acceptance"]
    assert len(found) == 1 and found[0]["severity"] == "warning"
    assert sorted(found[0]["paths"]) == ["data_2.ckpt", "data_5.ckpt"]
    assert "median" in found[0]["message"] and "MAD" in found[0]["message"] and "data_2.ckpt" in found[0]["message"]
    quiet = dataset_findings(list(_records(clean, drafter=(str(trained.drafter), None)).values()))
    assert not [f for f in quiet if f["code"] == "low_acceptance"]
    # no drafter: no figures, no finding
    plain = _records(mixed)
    assert all("accept" not in r for r in plain.values())
    assert not [f for f in dataset_findings(list(plain.values())) if f["code"] == "low_acceptance"]


def _cli(*args):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    return warm_cli.run([sys.executable, "-m", "eagle3_tui", "scan", *args], text=True, env=env, timeout=180)


def test_cli_scan_with_drafter(trained, datasets):
    _, mixed = datasets
    p = _cli(str(mixed), "--drafter", str(trained.drafter), "--workers", "2")
    assert p.returncode == 1, p.stderr  # the finding is a warning
    assert "low_acceptance" in p.stdout and "data_5.ckpt" in p.stdout
    assert "drafter top-1 (SpecForge, 1 layer, 3 aux states, draft vocab 320) vs data's ids: median" in p.stdout
    js = _cli(str(mixed), "--drafter", str(trained.drafter), "--json", "--workers", "2")
    lines = [json.loads(x) for x in js.stdout.splitlines()]
    per_file = {x["path"]: x["accept"]["top1"] for x in lines if "path" in x}
    assert len(per_file) == 12 and per_file["data_5.ckpt"] < 0.5 * per_file["data_0.ckpt"]
    bad = _cli(str(mixed), "--drafter", str(mixed))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "drafter" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.asyncio(loop_scope="session")
async def test_remote_scan_with_drafter_equals_local(trained, datasets, server, shared_box):
    _, mixed = datasets
    box = await shared_box()
    drafter = (str(trained.drafter), None)
    remote = {r["path"]: r["accept"] async for r in box.scan(str(mixed), drafter=drafter, workers=1) if "path" in r}
    local = {r["path"]: r["accept"] async for r in LocalSource().scan(str(mixed), drafter=drafter, workers=1)
             if "path" in r}
    assert remote == local and len(remote) == 12
    with pytest.raises(Exception) as err:
        async for _ in box.scan(str(mixed), drafter=(str(mixed), None)):
            pass
    assert "--drafter" in str(err.value)
