"""`scan --model --identify-all --ray` and `scan --accept --ray`: the per-file model work on Ray
actors (one model each) gives what the local scan gives, file for file and group for group."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from tests.helpers import warm_cli
from tests.helpers.drafter import config as drafter_config
from tests.helpers.drafter import init_weights, save_drafter
from tests.helpers.hf_target import make_target
from tests.helpers.scan_build import build

TIMEOUT = 600


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return make_target(tmp_path_factory.mktemp("ray-model") / "llama")


@pytest.fixture(scope="module")
def shifted(tmp_path_factory, target, untouched) -> Path:
    """Two shards of 6 files (the second one boundary lower): small, every file is identified."""
    root = tmp_path_factory.mktemp("ray-shifted")
    build(root, shards=2, per_shard=6, shifted_shard=1, seed=2, model=target)
    untouched(root)
    return root


@pytest.fixture(scope="module")
def drafter(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ray-drafter") / "drafter"
    save_drafter(str(folder), init_weights(torch.Generator().manual_seed(0), draft_vocab=1000), cfg=drafter_config(1000))
    return folder


def last_line(*args) -> tuple[int, dict, list[dict]]:
    done = warm_cli.run([sys.executable, "-m", "eagle3_tui", "scan", *map(str, args), "--json", "--no-cache"],
                        check=False, capture_output=True, text=True, timeout=TIMEOUT)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines, done.stderr
    return done.returncode, lines[-1], lines[:-1]


def without_computed(entries: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if k != "computed"} for e in entries]


def test_identify_all_and_accept_on_actors_equal_the_local_run(ray_cluster, shifted, target, drafter):
    args = (shifted, "--model", target.folder, "--identify-all", "--accept", drafter)
    rc, local, _ = last_line(*args)
    ray_rc, ray, _ = last_line(*args, "--ray", ray_cluster.address)
    assert ray_rc == rc
    assert without_computed(ray["layers"]) == without_computed(local["layers"])
    assert {e["computed"] for e in ray["layers"]} == {"ray"}
    assert without_computed(ray["acceptance"]) == without_computed(local["acceptance"])
    assert ray["findings"] == local["findings"]
    assert ray["layers"] and not any("error" in e for e in ray["layers"])  # every file identified on an actor
    assert ray["acceptance"]
