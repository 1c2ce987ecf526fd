"""`scan --model` verifies (issue 23): every suspect and a random sample sized for the stated
minority are identified, the files at other layers are named exactly, and the guarantee is said."""

from __future__ import annotations

import json
import random

import pytest

from eagle3_tui.cli import main
from eagle3_tui.dataset.layers import plan
from eagle3_tui.dataset.verify import sample_size
from tests.helpers.hf_target import make_target
from tests.helpers.outlier_world import modelopt_set, replant

# its datasets are built once: the module's tests share one xdist worker
pytestmark = pytest.mark.xdist_group("scan-verify")


def test_the_sample_size_is_the_hypergeometric_bound():
    assert sample_size(100_000, 0.01) == 458  # 1 - 0.99^458 >= 0.99
    assert sample_size(50, 0.01) == 50  # one file in fifty: every file
    n = sample_size(300, 0.02)
    miss = 1.0
    for i in range(n):
        miss *= (300 - 6 - i) / (300 - i)
    assert miss <= 0.01 < miss * (300 - n + 1) / (300 - 6 - n + 1)  # n is the fewest that do


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("verify")
    target = make_target(root / "llama")
    files = modelopt_set(root / "data", 300, seed=11, target=target)
    return root, target, files


def _records(capsys, root) -> tuple[list[dict], dict]:
    main(["scan", str(root), "--json", "--no-cache"])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    return lines[:-1], lines[-1]


def test_the_random_sample_alone_catches_a_2_percent_minority_in_20_of_20_seeds(world, capsys):
    """Without any suspect (no finding to lean on), the drawn files hold a file of a 2% minority
    whichever 6 files it is: the sample is sized for 1% at 99%."""
    root, _, files = world
    records, _ = _records(capsys, root / "data")
    paths = [r["path"] for r in records]
    caught = 0
    for seed in range(20):
        minority = set(random.Random(seed).sample(paths, 6))
        picks, checks = plan(records, [], minority=0.01)
        drawn = {p["path"] for p in picks}
        caught += bool(drawn & minority)
        assert checks["drawn"] + 1 == len(picks) and checks["suspects"] == 0  # the majority's representative
    assert caught == 20


def test_scan_model_names_the_files_at_other_layers_and_says_the_guarantee(world, tmp_path, capsys):
    root, target, files = world
    data = tmp_path / "data"
    data.mkdir()
    for f in files:
        (data / f.name).write_bytes(f.read_bytes())
    odd = sorted(random.Random(5).sample([f.name for f in files], 6))
    for name in odd:
        replant(data / name, +1, target=target)
    code = main(["scan", str(data), "--model", str(target.folder), "--json", "--no-cache"])
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    by_code = {f["code"]: f for f in last["findings"]}
    assert code == 1
    assert sorted(by_code["layer_minority"]["paths"]) == odd, by_code["layer_minority"]
    assert "every slot 1 boundary deeper" in by_code["layer_minority"]["message"]
    checked = by_code["layers_checked"]
    assert checked["suspects"] == 6 and checked["checked"] <= checked["drawn"] + checked["suspects"]
    assert checked["drawn"] == sample_size(checked["pool"], 0.01) < checked["pool"]
    assert "would have shown up with 99% confidence" in checked["message"]


def test_identify_all_identifies_every_file(world, tmp_path, capsys):
    root, target, files = world
    data = tmp_path / "data"
    data.mkdir()
    for f in files[:30]:
        (data / f.name).write_bytes(f.read_bytes())
    main(["scan", str(data), "--model", str(target.folder), "--identify-all", "--json", "--no-cache"])
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    checked = next(f for f in last["findings"] if f["code"] == "layers_checked")
    assert checked["checked"] == 29 and checked["all"]  # every file but the majority's representative
    assert "every file's layers are known" in checked["message"]
    assert not [f for f in last["findings"] if f["code"] == "layer_minority"]


def test_minority_out_of_range_is_one_line(world, capsys):
    root, target, _ = world
    assert main(["scan", str(root / "data"), "--model", str(target.folder), "--minority", "0"]) == 2
    assert "--minority 0: expected a share in percent" in capsys.readouterr().err


@pytest.mark.parametrize("where", [0, 150, 299])
def test_a_single_file_at_other_layers_is_a_suspect_and_named(world, tmp_path, capsys, where):
    """One file re-captured one boundary deeper (a run of one, at the start, middle or end in
    path order): too few to be a finding by its signature alone, it goes past the outlier limit,
    so --model identifies it first and names it."""
    root, target, files = world
    data = tmp_path / "data"
    data.mkdir()
    for f in files:
        (data / f.name).write_bytes(f.read_bytes())
    odd = sorted(f.name for f in files)[where]
    replant(data / odd, +1, target=target)
    main(["scan", str(data), "--model", str(target.folder), "--json", "--no-cache"])
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    by_code = {f["code"]: f for f in last["findings"]}
    assert by_code["layer_minority"]["paths"] == [odd]
    assert by_code["layers_checked"]["suspects"] >= 1


def test_settle_drops_files_verified_at_the_majority_from_the_signature_warning():
    """A signature_outliers warning must not keep saying "other layers" of files --model found at
    the majority's boundaries (issue 30: on a real model an unusual prompt stands apart too)."""
    from eagle3_tui.dataset.verify import settle

    warn = {"code": "signature_outliers", "severity": "warning", "message": "3 of 40 files stand apart",
            "paths": ["a.pt", "b.pt", "c.pt"], "scores": [9.0, 8.0, 7.0]}
    checked = {"code": "layers_checked", "severity": "info", "message": "", "agree": ["a.pt", "c.pt"]}
    (left,) = settle([warn], [checked])
    assert left["severity"] == "warning" and left["paths"] == ["b.pt"] and left["scores"] == [8.0]
    assert "2 files it named verified at the majority's boundaries" in left["message"]
    (cleared,) = settle([warn], [{**checked, "agree": ["a.pt", "b.pt", "c.pt"]}])
    assert cleared["severity"] == "info" and "verified at the majority's boundaries" in cleared["message"]
    assert settle([warn], [{**checked, "agree": []}]) == [warn]
