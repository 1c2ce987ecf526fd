"""`eagle3-tui accept` locally and over SSH: the same numbers, computed next to the data."""

from __future__ import annotations

import json
import os
import sys

import pytest

from eagle3_tui.sources.local import LocalSource
from tests.helpers import warm_cli

KEYS = {"path", "drafter", "rows", "top1", "steps", "tau", "per_token", "computed"}


def _cli(*args):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    return warm_cli.run([sys.executable, "-m", "eagle3_tui", "accept", *args], text=True, env=env, timeout=120)


def test_cli_json_and_human_output(trained):
    sample = str(trained.data / "train_0.ckpt")
    p = _cli(sample, "--drafter", str(trained.drafter), "--steps", "2", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert KEYS <= set(r) and r["computed"] == "local" and r["path"] == sample
    assert len(r["steps"]) == 2 and r["top1"] == r["steps"][0] > 0.5
    assert {"row", "target", "draft", "p", "hit"} <= set(r["per_token"][0])
    human = _cli(sample, "--drafter", str(trained.drafter), "--steps", "2")
    assert human.returncode == 0
    assert f"top-1 {100 * r['top1']:.1f}% over {r['rows']} rows (loss mask" in human.stdout
    assert f"tau {r['tau']:.2f}" in human.stdout


def test_cli_order_repairs_a_permuted_capture(trained):
    args = ("--drafter", str(trained.drafter), "--json")
    ok = json.loads(_cli(str(trained.data / "ok_bf16_0.pt"), *args).stdout)
    bad = json.loads(_cli(str(trained.data / "permuted_0.pt"), *args).stdout)
    fixed = json.loads(_cli(str(trained.data / "permuted_0.pt"), *args, "--order", "1,2,0").stdout)
    assert bad["top1"] < 0.5 * ok["top1"] and fixed["top1"] == ok["top1"]



@pytest.mark.asyncio(loop_scope="session")
async def test_remote_accept_equals_local(trained, server, shared_box):
    box = await shared_box()
    assert box.computed == "remote"
    for name, kw in (("train_0.ckpt", {}), ("permuted_1.pt", {"order": [1, 2, 0], "steps": 2}),
                     ("train_2.ckpt", {"model": str(trained.model), "all_rows": True})):
        path = str(trained.data / name)
        remote = await box.accept(path, str(trained.drafter), **kw)
        local = await LocalSource().accept(path, str(trained.drafter), **kw)
        assert remote["computed"] == "remote" and local["computed"] == "local"
        assert "error" not in remote, remote
        assert {k: v for k, v in remote.items() if k != "computed"} == {k: v for k, v in local.items()
                                                                         if k != "computed"}
    bad = await box.accept(str(trained.data / "train_0.ckpt"), str(trained.data))
    assert "no config.json" in bad["error"] and bad["computed"] == "remote"
