"""`scan --accept`: what acceptance each group of files costs, scored on a few files per group.

The drafter is tests/accept's, trained on the demo transformer's states at boundaries (2, 5, 7);
the datasets hold three shards of its kind of text (rule_seq), written in SpecForge's offline
layout; in `shifted` the middle shard is written one boundary lower (1, 4, 6), which the scan's
statistic splits off as a layer_group and on which the drafter accepts far less.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from eagle3_tui.cli import main
from eagle3_tui.dataset.acceptance import MAX_ACCEPT, MIN_DROP
from eagle3_tui.sources.local import LocalSource
from tests.helpers.accept import _save_sample
from tests.helpers.drafter import AUX
from tests.helpers.ssh import cli
from tests.scan.interrupt import interrupt_scan_at

SHIFTED = [f"rows_12-24/data_{i}.ckpt" for i in range(12, 24)]


def _write(root: Path, world, *, shifted: bool, seed: int) -> Path:
    rng = random.Random(seed)
    for s in range(3):
        shard = root / f"rows_{s * 12}-{(s + 1) * 12}"
        shard.mkdir(parents=True)
        for i in range(s * 12, (s + 1) * 12):
            seq = world.rule_seq(rng, rng.randint(10, 30), 100)
            _save_sample(shard / f"data_{i}.ckpt", seq, boundaries=[b - 1 for b in AUX] if shifted and s == 1 else AUX)
    return root


@pytest.fixture(scope="module")
def shifted(tmp_path_factory, trained, untouched) -> Path:  # noqa: F811
    root = _write(tmp_path_factory.mktemp("accept-shifted"), trained.world, shifted=True, seed=7)
    untouched(root)
    return root


@pytest.fixture(scope="module")
def clean(tmp_path_factory, trained, untouched) -> Path:  # noqa: F811
    root = _write(tmp_path_factory.mktemp("accept-clean"), trained.world, shifted=False, seed=8)
    untouched(root)
    return root


@pytest.fixture
def calls(monkeypatch) -> list[str]:
    """The paths Source.accept was called on (the real method runs)."""
    seen: list[str] = []
    real = LocalSource.accept

    async def counted(self, path, *args, **kw):
        seen.append(path)
        return await real(self, path, *args, **kw)

    monkeypatch.setattr(LocalSource, "accept", counted)
    return seen


def scan_json(capsys, *argv) -> tuple[int, dict]:
    code = main(["scan", *map(str, argv), "--json", "--workers", "1", "--no-cache"])
    lines = capsys.readouterr().out.splitlines()
    return code, json.loads(lines[-1])


def test_the_shifted_group_costs_acceptance_in_the_text_report(shifted, trained, capsys):  # noqa: F811
    code = main(["scan", str(shifted), "--accept", str(trained.drafter), "--workers", "1", "--no-cache"])
    out = capsys.readouterr().out
    assert code == 1
    findings, rest = out.split(f"\n\nacceptance (drafter {trained.drafter}: SpecForge, 1 layer, 3 aux states, "
                               "draft vocab 320; 3 steps against the data's next token ids, 12 files scored):\n", 1)
    assert "WARNING layer_group" in findings and "WARNING group_low_acceptance: files 12..23 (layer_group)" in findings
    section = rest.split("\n\nshard ", 1)[0].splitlines()
    assert section[0].startswith("  majority: step-1 top-1 ") and "(4 files of 12), τ " in section[0]
    assert section[1].startswith("  files 12..23 (layer_group): step-1 top-1 ")
    assert "(4 files of 12) vs the majority's " in section[1] and ": costs " in section[1] and " points; τ " in section[1]
    assert section[2].startswith("  shard rows_24-36: step-1 top-1 ")


def test_json_gives_each_group_its_figures_and_names_the_group_files(shifted, trained, calls, capsys):  # noqa: F811
    code, last = scan_json(capsys, shifted, "--accept", trained.drafter)
    assert code == 1
    groups = {e["group"]: e for e in last["acceptance"]}
    assert list(groups) == ["majority", "layer_group", "shard"]
    major, group, shard = groups["majority"], groups["layer_group"], groups["shard"]
    for e in groups.values():
        assert e["scored"] == 4 and e["files"] == 12 and e["computed"] == "local" and len(e["steps"]) == 3
        assert e["tau"] >= 1.0
    # the group's own files, spread along it (its first and last file both scored), no file twice
    assert set(group["paths"]) <= set(SHIFTED) and group["paths"][0] == SHIFTED[0] and SHIFTED[-1] in group["paths"]
    assert len({p for e in groups.values() for p in e["paths"]}) == 12
    assert major["top1"] > 0.5 and abs(shard["top1"] - major["top1"]) < MIN_DROP
    assert group["top1"] < major["top1"] - MIN_DROP and group["tau"] < major["tau"]
    assert group["drop"] == pytest.approx(100 * (major["top1"] - group["top1"]), abs=0.06)
    (f,) = [f for f in last["findings"] if f["code"] == "group_low_acceptance"]
    assert f["severity"] == "warning" and f["paths"] == SHIFTED and f["group"] == "files 12..23"
    severities = [x["severity"] for x in last["findings"]]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    # the files scored are the files reported, each scored once, in the dataset
    assert sorted(calls) == sorted(str(shifted / p) for e in groups.values() for p in e["paths"])


def test_a_clean_dataset_gets_figures_and_no_warning(clean, trained, capsys):  # noqa: F811
    code, last = scan_json(capsys, clean, "--accept", trained.drafter)
    assert code == 0, last["findings"]
    assert [e["group"] for e in last["acceptance"]] == ["majority", "shard", "shard"]
    assert all(e["scored"] == 4 and e["top1"] > 0.5 for e in last["acceptance"])
    assert not [f for f in last["findings"] if f["code"] == "group_low_acceptance"]
    # without --accept nothing changes
    code, last = scan_json(capsys, clean)
    assert code == 0 and "acceptance" not in last


def test_source_accept_calls_stay_within_the_bound(shifted, trained, calls, capsys):  # noqa: F811
    code, last = scan_json(capsys, shifted, "--accept", trained.drafter, "--accept-files", "100")
    assert code == 1
    assert len(calls) == sum(e["scored"] for e in last["acceptance"]) == 30 <= MAX_ACCEPT  # 3 groups of 10
    assert len(set(calls)) == len(calls)
    calls.clear()
    code, last = scan_json(capsys, shifted, "--accept", trained.drafter, "--accept-files", "1")
    assert len(calls) == 3 and [e["scored"] for e in last["acceptance"]] == [1, 1, 1]
    assert main(["scan", str(shifted), "--accept", str(trained.drafter), "--accept-files", "0"]) == 2
    assert "--accept-files must be at least 1" in capsys.readouterr().err


def test_a_folder_here_that_is_no_drafter_is_refused_before_the_scan(shifted, calls, capsys):
    """Checked up front as --drafter and --vocab-mapping are (issue 21): one line, exit 2."""
    assert main(["scan", str(shifted), "--accept", str(shifted), "--json", "--workers", "1", "--no-cache"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and calls == []
    (line,) = err.strip().splitlines()
    assert line.startswith(f"eagle3-tui: scan: --accept: {shifted}: ") and "not a drafter folder" in line


@pytest.mark.asyncio(loop_scope="session")
async def test_over_ssh_the_drafter_runs_on_the_box_and_gives_the_same(home, shifted, trained):  # noqa: F811
    options = ("--json", "--no-cache", "--workers", "1")
    rc, out, err = await cli(home, "scan", f"box:{shifted}", "--accept", f"box:{trained.drafter}", *options)
    assert rc == 1, err
    remote = json.loads(out.splitlines()[-1])
    assert {e["computed"] for e in remote["acceptance"]} == {"remote"}
    rc, out, err = await cli(home, "scan", str(shifted), "--accept", str(trained.drafter), *options)
    assert rc == 1, err
    local = json.loads(out.splitlines()[-1])
    for e in remote["acceptance"] + local["acceptance"]:
        e.pop("computed")
    assert remote["acceptance"] == local["acceptance"]
    strip = lambda fs: [{k: v for k, v in f.items() if k != "message"} for f in fs]  # noqa: E731
    assert "group_low_acceptance" in [f["code"] for f in remote["findings"]]
    assert strip(remote["findings"]) == strip(local["findings"])


def test_ctrl_c_while_scoring_stops_and_still_reports(shifted, trained):  # noqa: F811
    """stderr on a terminal, so that the progress line shows "scoring acceptance"; the signal lands then."""
    code, text, last = interrupt_scan_at(
        b"scoring acceptance 1/30: rows_0-12/data_0.ckpt", str(shifted), "--accept", str(trained.drafter),
        "--accept-files", "10", "--json", "--no-cache", "--workers", "1")
    assert code == 130, text
    assert "Traceback" not in text and "interrupted; the acceptance covers" in text and "of the 30 files" in text
    assert last["summary"]["interrupted"] is True and last["summary"]["files"] == 36
    assert sum(e["scored"] for e in last["acceptance"]) < 30  # 0 when it lands while the drafter loads
