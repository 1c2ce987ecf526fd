"""`scan --model`: the boundary each slot of the dataset holds, named per group of files.

The datasets are written by tests/helpers/scan_build.py in SpecForge's layout with the states of a tiny
Llama saved by save_pretrained (tests/scan/hf_target.py: the demo transformer's shape, aux
boundaries (2, 5, 7) of L = 10); the shifted shard holds (1, 4, 6).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path

import pytest
import torch

from eagle3_tui.cli import main
from eagle3_tui.dataset.layers import MAX_IDENTIFY
from tests.helpers.drafter import config as drafter_config
from tests.helpers.drafter import init_weights, save_drafter
from tests.helpers.hf_target import CFG, make_target
from tests.helpers.scan_build import build
from tests.helpers.ssh import cli
from tests.scan.interrupt import interrupt_scan_at

AUX = list(CFG.aux_boundaries)  # [2, 5, 7]
LOWER = [b - 1 for b in AUX]  # the shifted shard: every layer id read one boundary lower


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return make_target(tmp_path_factory.mktemp("scan-model") / "llama")


@pytest.fixture(scope="module")
def shifted(tmp_path_factory, target, untouched) -> Path:
    root = tmp_path_factory.mktemp("shifted")
    build(root, shifted_shard=1, seed=2, model=target)
    untouched(root)
    return root


@pytest.fixture(scope="module")
def clean(tmp_path_factory, target, untouched) -> Path:
    root = tmp_path_factory.mktemp("clean-hf")
    build(root, seed=4, model=target)
    untouched(root)
    return root


@pytest.fixture(scope="module")
def drafter(tmp_path_factory) -> Path:
    """An EAGLE-3 drafter in SpecForge's layout (untrained: only its config's ids [1, 4, 6] matter
    here, read as "output of" they are the majority's b 2, 5, 7)."""
    folder = tmp_path_factory.mktemp("drafter") / "drafter"
    save_drafter(str(folder), init_weights(torch.Generator().manual_seed(0), draft_vocab=1000), cfg=drafter_config(1000))
    assert json.loads((folder / "config.json").read_text())["eagle_config"]["eagle_aux_hidden_state_layer_ids"] == [1, 4, 6]
    return folder


def scan_json(capsys, *argv) -> tuple[int, dict]:
    code = main(["scan", *map(str, argv), "--json", "--workers", "1"])
    lines = capsys.readouterr().out.splitlines()
    return code, json.loads(lines[-1])


def by_group(last: dict) -> dict[str, dict]:
    return {e["group"]: e for e in last["layers"]}


def test_shifted_shard_is_named_one_boundary_lower_in_the_text_report(shifted, target, capsys):
    code = main(["scan", str(shifted), "--model", str(target.folder), "--workers", "1"])
    out = capsys.readouterr().out
    assert code == 1  # the layer_group warning
    findings, rest = out.split("\n\nlayers (--model", 1)
    assert rest.startswith(f" {target.folder}): named from 3 files identified with the model, one per group (below); ")
    assert "WARNING layer_group" in findings
    section = rest.split("\n\nshard ", 1)[0]
    assert "majority (24 files; rows_0-12/data_0.ckpt): b=2, 5, 7 (match), final post-norm" in section
    assert ("files 12..23 (layer_group, 12 files; rows_12-24/data_12.ckpt): b=1, 4, 6 (match), final post-norm: "
            "one boundary lower than the majority") in section
    assert 'read as SpecForge\'s "output of" ids [0, 3, 5] / vLLM\'s "input of" ids [1, 4, 6]' in section
    assert 'read as SpecForge\'s "output of" ids [1, 4, 6] / vLLM\'s "input of" ids [2, 5, 7]' in section
    assert "aux0 b=1 cos 1.0000 margin" in section  # the numbers that prove it
    # the third shard is identified too (few shards) and holds the majority's layers
    assert "shard rows_24-36 (12 files; rows_24-36/data_24.ckpt): b=2, 5, 7 (match), final post-norm: the majority's" in section


def test_json_layers_give_each_group_its_boundaries_and_scores(shifted, target, capsys):
    code, last = scan_json(capsys, shifted, "--model", target.folder)
    assert code == 1
    groups = by_group(last)
    assert list(groups) == ["majority", "layer_group", "shard"]
    major, group, shard = groups["majority"], groups["layer_group"], groups["shard"]
    assert major["boundaries"] == AUX and shard["boundaries"] == AUX
    assert group["boundaries"] == LOWER and group["offset"] == -1 and group["range"] == [12, 23]
    assert group["paths"][0].startswith("rows_12-24/") and not major["paths"][0].startswith("rows_12-24/")
    for e in groups.values():
        assert e["computed"] == "local" and e["layers"] == CFG.layers
        assert [s["status"] for s in e["slots"]] == ["match"] * 3
        assert all(s["cosine"] > 0.999 and s["margin"] > 0.03 for s in e["slots"])
        assert all(s["second"]["boundary"] in (s["boundary"] - 1, s["boundary"] + 1) for s in e["slots"])
        assert e["final"]["norm"] == "post" and e["final"]["cosine"] > 0.999
    assert major["reading"]["output_of"] == [1, 4, 6] and major["reading"]["input_of"] == [2, 5, 7]
    assert group["reading"]["output_of"] == [0, 3, 5] and group["reading"]["input_of"] == [1, 4, 6]
    assert {(f["ids_from"], f["reading"]) for f in group["reading"]["fits"]} >= {("SpecForge default ids", "input")}
    # without a drafter there is nothing to hold the groups against: the layer_group stays the warning
    assert [f["code"] for f in last["findings"]] == ["layer_group", "padding_states", "layers_checked"]


def test_with_a_drafter_the_group_reading_its_ids_otherwise_is_a_warning(shifted, target, drafter, capsys):
    code, last = scan_json(capsys, shifted, "--model", target.folder, "--drafter", drafter)
    assert code == 1
    conv = [f for f in last["findings"] if f["code"] == "layer_convention"]
    assert len(conv) == 1, last["findings"]
    f = conv[0]
    assert f["severity"] == "warning" and (f["follows"], f["disagrees"]) == ("input", "output")
    assert f["ids"] == [1, 4, 6] and f["boundaries"] == LOWER
    assert f["paths"] == [f"rows_12-24/data_{i}.ckpt" for i in range(12, 24)]
    assert "other convention" in f["message"] and "b 1, 4, 6" in f["message"] and "b 2, 5, 7" in f["message"]
    groups = by_group(last)
    assert groups["majority"]["drafter"] == {"ids": [1, 4, 6], "ids_from": "eagle_config.eagle_aux_hidden_state_layer_ids",
                                             "follows": ["output"], "agrees": True}
    assert groups["layer_group"]["drafter"]["agrees"] is False
    assert groups["shard"]["drafter"]["agrees"] is True
    # severity order kept: warnings before notes
    severities = [x["severity"] for x in last["findings"]]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)


def test_clean_dataset_gives_the_majority_layers_and_no_warning(clean, target, drafter, capsys):
    code, last = scan_json(capsys, clean, "--model", target.folder)
    assert code == 0, last["findings"]
    assert [e["group"] for e in last["layers"]] == ["majority", "shard", "shard"]
    assert all(e["boundaries"] == AUX and e.get("same_as_majority") is not False for e in last["layers"])
    code, last = scan_json(capsys, clean, "--model", target.folder, "--drafter", drafter)
    assert code == 0, last["findings"]
    assert all(e["drafter"]["follows"] == ["output"] and e["drafter"]["agrees"] for e in last["layers"])
    assert not [f for f in last["findings"] if f["severity"] != "info"]


def test_a_shard_too_small_for_the_statistic_is_named_by_identify(tmp_path, target, capsys):
    # two files per shard: no run of MIN_RUN files to split off, so no layer_group finding
    build(tmp_path, shards=4, per_shard=2, shifted_shard=2, seed=6, model=target)
    code, last = scan_json(capsys, tmp_path, "--model", target.folder)
    assert "layer_group" not in {f["code"] for f in last["findings"]}
    assert code == 1
    (f,) = [f for f in last["findings"] if f["code"] == "layer_shard"]
    assert f["severity"] == "warning" and f["paths"] == ["rows_4-6/data_4.ckpt", "rows_4-6/data_5.ckpt"]
    assert f["boundaries"] == LOWER and "one boundary lower" in f["message"]


def test_identify_calls_are_bounded_on_many_shards(tmp_path, target, capsys):
    build(tmp_path, shards=MAX_IDENTIFY + 2, per_shard=4, seed=7, model=target)
    code, last = scan_json(capsys, tmp_path, "--model", target.folder)
    assert code == 0
    assert [e["group"] for e in last["layers"]] == ["majority"]  # too many shards to take one each
    assert last["layers"][0]["boundaries"] == AUX
    with pytest.raises(SystemExit):
        main(["scan", "--help"])
    assert f"at most {MAX_IDENTIFY} files" in " ".join(capsys.readouterr().out.split())


def test_cached_records_still_give_the_layers(clean, target, capsys):
    main(["scan", str(clean), "--json", "--workers", "1"])  # fills the record cache
    capsys.readouterr()
    code, last = scan_json(capsys, clean, "--model", target.folder)
    assert last["summary"]["cached"] == last["summary"]["files"] == 36
    assert code == 0 and [e["boundaries"] for e in last["layers"]] == [AUX] * 3


def test_a_folder_here_that_is_not_a_model_is_refused_before_the_scan(clean, tmp_path, capsys):
    """Checked up front as --vocab-mapping is (issue 21): one line, exit 2, nothing scanned."""
    assert main(["scan", str(clean), "--model", str(tmp_path), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip().splitlines() == [
        f"eagle3-tui: scan: --model: model {tmp_path}: not a Hugging Face model folder (no config.json)"]


def test_model_on_another_host_is_refused_in_one_line(clean, capsys):
    assert main(["scan", str(clean), "--model", "otherbox:/models/llama"]) == 2
    err = capsys.readouterr().err
    assert "--model otherbox:/models/llama must be on the same machine" in err and "Traceback" not in err


def test_ctrl_c_while_identifying_stops_and_still_reports(shifted, target):
    """stderr on a terminal, so that the progress line shows "identifying"; the signal lands then."""
    code, text, last = interrupt_scan_at(
        b"identifying 1/36: rows_0-12/data_0.ckpt", str(shifted), "--model", str(target.folder), "--json",
        "--no-cache", "--workers", "1")
    assert code == 130, text
    assert "Traceback" not in text and "interrupted; the layers cover" in text
    assert last["summary"]["interrupted"] is True and last["summary"]["files"] == 36
    assert len(last["layers"]) < 3


OVER_SSH = ("--json", "--no-cache", "--workers", "1")


@pytest.fixture(scope="module")
def local_scan(shifted, target, drafter) -> dict:
    """The same scan here, once for both SSH servers."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["scan", str(shifted), "--model", str(target.folder), "--drafter", str(drafter), *OVER_SSH])
    assert rc == 1, err.getvalue()
    return json.loads(out.getvalue().splitlines()[-1])


@pytest.mark.xdist_group("scan-model-over-ssh")  # one worker builds the model, the data and the local scan
@pytest.mark.asyncio(loop_scope="session")
async def test_over_ssh_the_model_runs_on_the_box_and_gives_the_same(home, shifted, target, drafter,  # noqa: F811
                                                                     local_scan):
    rc, out, err = await cli(home, "scan", f"box:{shifted}", "--model", f"box:{target.folder}",
                             "--drafter", str(drafter), *OVER_SSH)
    assert rc == 1, err
    remote = json.loads(out.splitlines()[-1])
    assert {e["computed"] for e in remote["layers"]} == {"remote"}
    local = copy.deepcopy(local_scan)
    for e in remote["layers"] + local["layers"]:
        e.pop("computed")
    strip = lambda fs: [{k: v for k, v in f.items() if k != "message"} for f in fs]  # noqa: E731
    assert remote["layers"] == local["layers"]
    assert [e["boundaries"] for e in remote["layers"]] == [AUX, LOWER, AUX]
    assert strip(remote["findings"]) == strip(local["findings"])
