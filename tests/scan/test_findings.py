"""Planted problems are each named, with the right files; a clean dataset stays silent."""

from __future__ import annotations

import json

import pytest

from eagle3_tui.cli import main
from eagle3_tui.dataset.findings import dataset_findings
from eagle3_tui.engines.scan.records import scan_tree
from tests.helpers.scan import PLANTED
from tests.helpers.scan_build import build


def run_json(capsys, *argv) -> tuple[int, list[dict], dict]:
    code = main(["scan", *map(str, argv), "--json"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return code, lines[:-1], lines[-1]


@pytest.mark.parametrize("full", [False, True])
def test_every_planted_problem_is_named_with_its_files(planted, capsys, full):
    code, records, last = run_json(capsys, planted, *(["--full"] if full else []), "--workers", "2")
    assert code == 1
    by_code = {f["code"]: f for f in last["findings"]}
    assert set(by_code) == set(PLANTED), sorted(by_code)
    assert by_code["missing_index"]["indices"] == [5]
    for code_ in ("unreadable", "nonfinite", "layout_mismatch", "empty_loss_mask", "loss_on_padding"):
        assert by_code[code_]["paths"] == PLANTED[code_], (code_, by_code[code_])
    assert by_code["layout_mismatch"]["field"] == "dtype"
    assert by_code["layer_group"]["range"] == PLANTED["layer_group"]
    assert by_code["layer_group"]["confidence"] >= 0.99
    assert by_code["duplicate"]["groups"] == PLANTED["duplicate"]
    nan = by_code["nonfinite"]["counts"][0]
    assert (nan["nan"], nan["inf"], nan["first_row"]) == (1, 1, 0)
    # the vocab mapping and README are reported as not samples, never as unreadable
    odd = {r["path"]: r for r in records if "error" in r}
    assert odd["vocab_mapping/vocab_mapping.pt"]["not_sample"] and odd["README.txt"]["not_sample"]
    assert all(r["computed"] == "local" for r in records)
    assert last["summary"]["files"] == len(records) == 38 and last["summary"]["errors"] == 1


@pytest.mark.parametrize("seed", [1, 5, 9])
def test_clean_datasets_raise_nothing_above_info(tmp_path, seed):
    build(tmp_path, seed=seed, shards=4)
    findings = dataset_findings(list(scan_tree(str(tmp_path), workers=1)))
    assert [f["code"] for f in findings] == ["padding_states"]


def test_clean_dataset_exits_0_with_a_report(clean, capsys):
    assert main(["scan", str(clean)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("findings:\n  INFO    padding_states")
    assert "rows_12-24" in out and "36 files (36 samples, 0 unreadable" in out


@pytest.mark.parametrize("shifted", [0, 2])
def test_a_shard_written_one_layer_lower_is_found_wherever_it_is(tmp_path, shifted):
    build(tmp_path, seed=3, shifted_shard=shifted)
    groups = [f for f in dataset_findings(list(scan_tree(str(tmp_path), workers=1))) if f["code"] == "layer_group"]
    assert [g["range"] for g in groups] == [[12 * shifted, 12 * shifted + 11]]


def test_unreadable_target_exits_2(tmp_path, capsys):
    assert main(["scan", str(tmp_path / "nope")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
