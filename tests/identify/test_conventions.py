"""The layer_convention finding: the drafter's ids read under each documented convention."""

from __future__ import annotations

import pytest

from eagle3_tui.engines.model.conventions import ConfigError, convention_finding, drafter_layer_ids
from eagle3_tui.engines.model.identify import identify_file
from tests.helpers.identify_world import DEFAULT, L

IDS = [1, 3, 5]  # the drafter's layer ids


def finding(r: dict) -> dict:
    return next(f for f in r["findings"] if f["code"] == "layer_convention")


@pytest.mark.parametrize("config", [
    {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS}},  # SpecForge drafter
    {"eagle_aux_hidden_state_layer_ids": IDS},                    # speculators / vLLM top level
    {"aux_hidden_state_layer_ids": IDS},
    {"dflash_config": {"target_layer_ids": IDS}},
], ids=["eagle_config", "top-level", "aux_hidden_state_layer_ids", "dflash_config"])
def test_drafter_ids_are_found_where_each_producer_writes_them(world, config):
    folder = world.drafter(f"drafter-{next(iter(config))}", config)
    assert drafter_layer_ids(str(folder))[0] == IDS


@pytest.mark.parametrize("reading,boundaries,disagrees", [
    ("output", [2, 4, 6], "input"),   # SpecForge, SGLang explicit ids: b = id + 1
    ("input", [1, 3, 5], "output"),   # vLLM, EAGLE-3 reference: b = id
])
def test_the_reading_the_data_follows_and_the_one_that_disagrees(world, reading, boundaries, disagrees):
    drafter = world.drafter("drafter", {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS}})
    path = world.specforge(f"conv_{reading}.ckpt", tuple(boundaries))
    r = identify_file(str(path), str(world.model), drafter=str(drafter))
    f = finding(r)
    assert (f["follows"], f["disagrees"], f["severity"]) == (reading, disagrees, "info")
    assert f["ids"] == IDS and f["ids_from"] == "eagle_config.eagle_aux_hidden_state_layer_ids"
    other = sorted(i + (1 if disagrees == "output" else 0) for i in IDS)
    assert "{" + ", ".join(map(str, other)) + "}" in f["message"]


def test_mixed_capture_is_a_warning_that_names_each_slot(world):
    """ids [1, 3, 5]: slot 0 at b = 1 (input of), slots 1 and 2 at b = 4, 6 (output of)."""
    drafter = world.drafter("drafter", {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS}})
    r = identify_file(str(world.specforge("mixed.ckpt", (1, 4, 6))), str(world.model), drafter=str(drafter))
    f = finding(r)
    assert f["severity"] == "warning" and f["follows"] == "mixed"
    assert "b=1 (input of layer)" in f["message"] and "b=4 (output of layer)" in f["message"]


def test_no_reading_fits(world):
    drafter = world.drafter("drafter", {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS}})
    r = identify_file(str(world.specforge("far.ckpt", (0, 7, 8))), str(world.model), drafter=str(drafter))
    f = finding(r)
    assert f["severity"] == "warning" and f["follows"] is None and "follow no reading" in f["message"]


def test_without_a_drafter_the_defaults_decide():
    got, fs = convention_finding(list(DEFAULT), L, None)
    assert fs[0]["severity"] == "info" and fs[0]["ids_from"] == "SpecForge default ids"
    _, fs = convention_finding([b - 1 for b in DEFAULT], L, None)
    assert fs[0]["severity"] == "warning" and fs[0]["follows"] == "input"
    assert fs[0]["ids_from"] == "SpecForge default ids" and "common default capture is b {2, 4, 5}" in fs[0]["message"]
    assert [r["boundaries"] for r in got["readings"] if r["ids_from"] == "vLLM default ids"][:2] == [[3, 5, 6], [2, 4, 5]]


def test_a_drafter_without_ids_is_one_line(world, tmp_path):
    folder = world.drafter("drafter-none", {"draft_vocab_size": 32})
    with pytest.raises(ConfigError, match="names no layer ids"):
        drafter_layer_ids(str(folder))
    r = identify_file(str(world.specforge("sf.ckpt")), str(world.model), drafter=str(tmp_path))
    assert "no config.json" in r["error"]
