"""compare on files in SpecForge's own layout (padded batches of 4, see specforge.py).

The promise: no warning or error on a correctly wired pair, over many samples, and the right
name for each fault. Issue 9 found false alarms on SpecForge's own padded output (a bit-identical
rerun warned about padding) and a one-boundary-off capture named as a permutation.
"""

from __future__ import annotations

import argparse

import pytest
import torch

from eagle3_tui.commands import compare as cmd
from eagle3_tui.engines.compare import compare_files

from tests.helpers.compare_world import codes, finding
from tests.helpers.specforge import BATCH, SpecForgeWriter, save

SEEDS = (0, 1, 2)
AUX = (2, 5, 7)  # the demo model's EAGLE-3 default boundaries (L = 10)
# issue 9's capture: SpecForge layer ids [1, 3, 4] against [0, 2, 3], every slot one boundary off,
# so that the last slot of the shallower capture lands exactly on the middle one of the other
DEEP, SHALLOW = (1, 3, 4), (0, 2, 3)


def serious(r) -> list[dict]:
    return [f for f in r["findings"] if f["severity"] != "info"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Per seed: training rows (float32, padded batch of 4) and the captures made of them."""
    root = tmp_path_factory.mktemp("specforge")
    out = {}
    for seed in SEEDS:
        w = SpecForgeWriter(seed)
        d = root / f"seed{seed}"
        files: dict[str, list[str]] = {}

        def put(kind, records):
            files[kind] = [save(rec, d / kind / f"data_{r}.ckpt") for r, rec in enumerate(records)]

        put("train", w.batch(AUX))
        put("rerun", w.batch(AUX))  # the same batch written again: bit-identical files
        put("bf16_batch", w.batch(AUX, torch.bfloat16))  # padded on both sides, bf16 engine
        put("single", [w.single(r, AUX) for r in range(BATCH)])  # batch-1 rerun: no padding
        put("single_bf16", [w.single(r, AUX, torch.bfloat16) for r in range(BATCH)])
        put("prefix", [w.single(r, AUX, torch.bfloat16, ids=w.prompts[r].prompt_ids) for r in range(BATCH)])
        put("train_deep", w.batch(DEEP))
        put("cap_shallow", w.batch(SHALLOW, torch.bfloat16))
        put("train_shallow", w.batch(SHALLOW))
        put("cap_deep", w.batch(DEEP, torch.bfloat16))
        out[seed] = (w, files)
    return out


def pairs(dataset, kind, train="train"):
    for seed, (w, files) in dataset.items():
        for r in range(BATCH):
            yield seed, r, w, files[train][r], files[kind][r]


# ------------------------------------------------------------------------------ silent pairs


def test_correct_pairs_raise_no_warning_over_many_samples(dataset):
    kinds = ("rerun", "bf16_batch", "single", "single_bf16", "prefix")
    alarms, count = [], 0
    for kind in kinds:
        for seed, r, w, a, b in pairs(dataset, kind):
            result = compare_files(a, b)
            count += 1
            if "error" in result or serious(result):
                alarms.append((kind, seed, r, result.get("error") or serious(result)))
                continue
            p = w.prompts[r]
            # the rows compared are A's real tokens (the prompt for a prefix capture), one number
            want = len(p.prompt_ids) if kind == "prefix" else len(p.ids)
            al = result["alignment"]
            assert al["length"] == want and al["on_padding"] == 0, (kind, seed, r, al)
            assert all(m["tokens"] == want and m["cos_mean"] > 0.999 for m in result["slots"]), (kind, seed, r)
    assert count == len(kinds) * len(SEEDS) * BATCH >= 60
    assert alarms == [], alarms


def test_bit_identical_rerun_of_a_padded_sample_is_exact_and_silent(dataset):
    w, files = dataset[0]
    padded = [r for r in range(BATCH) if len(w.prompts[r].ids) < max(len(p.ids) for p in w.prompts)]
    assert len(padded) == BATCH - 1  # every row but the longest carries padding
    for r in padded:
        result = compare_files(files["train"][r], files["rerun"][r])
        assert result["findings"] == []
        assert all(m["max_abs_err"] == 0 and m["cos_min"] > 0.99999 for m in result["slots"])
        assert result["a"]["valid_tokens"] == result["b"]["valid_tokens"] < result["b"]["tokens"]


def test_cli_header_count_is_the_compared_count(dataset, capsys):
    w, files = dataset[1]
    r = min(range(BATCH), key=lambda i: len(w.prompts[i].ids))  # the most padding
    result = compare_files(files["train"][r], files["rerun"][r])
    text = cmd.format_comparison(result)
    n = len(w.prompts[r].ids)
    assert f"{n} rows compared" in text and "padding" not in text
    assert text.startswith("FINDINGS: none")


# ------------------------------------------------------------------------------ padding that is a fault


def test_padding_rows_captured_as_tokens_warn_with_one_row_count(dataset, tmp_path, capsys):
    """An engine capture of the whole padded batch row (ids without a loss mask: nothing marks
    the padding) takes pad rows as real tokens: the warning stays, and header, finding and JSON
    give the same numbers."""
    w, files = dataset[2]
    r = min(range(BATCH), key=lambda i: len(w.prompts[i].ids))
    rec = torch.load(files["bf16_batch"][r], weights_only=True)
    b = save({"input_ids": rec["input_ids"], "aux_hidden_state": rec["aux_hidden_state"]}, tmp_path / "b.pt")
    result = compare_files(files["train"][r], b)
    n, t = len(w.prompts[r].ids), rec["input_ids"].numel()
    f = finding(result, "padding")
    assert codes(result) == {"padding"} and f["rows"] == t - n
    assert result["alignment"]["length"] == n and result["alignment"]["on_padding"] == t - n
    assert all(m["tokens"] == n for m in result["slots"])
    text = cmd.format_comparison(result)
    assert f"{n} rows compared, {t - n} more of B on A's padding" in text
    assert f"last {t - n} aligned rows" in text


# ------------------------------------------------------------------------------ layer shift


@pytest.mark.parametrize("train, capture, direction, offset", [
    ("train_deep", "cap_shallow", "shallower", -1),
    ("train_shallow", "cap_deep", "deeper", 1),
])
def test_one_boundary_off_is_a_layer_shift_not_a_permutation(dataset, train, capture, direction, offset):
    for seed, r, _w, a, b in pairs(dataset, capture, train=train):
        result = compare_files(a, b)
        assert codes(result) == {"slot_mismatch"}, (seed, r, result["findings"])
        f = finding(result, "slot_mismatch")
        assert [s["slot"] for s in f["slots"]] == [0, 1, 2]  # every B slot, the exact match too
        assert f["shift"]["direction"] == direction and f["shift"]["slots"] == offset
        assert "one boundary off: layer ids read under the other convention" in f["message"]
        # the exact match: B2 holds A1 (shallower capture) or B1 holds A2 (deeper)
        j = 2 if offset < 0 else 1
        held = next(s for s in f["slots"] if s["slot"] == j)
        assert held["holds"] == j + offset and held["cosine"] > 0.999


@pytest.mark.parametrize("shift, direction", [(1, "deeper"), (-1, "shallower")])
def test_every_slot_off_without_an_exact_match_still_tells_the_direction(dataset, tmp_path, shift, direction):
    w, files = dataset[0]
    for r in range(BATCH):
        b = save(w.single(r, [x + shift for x in AUX], torch.bfloat16), tmp_path / f"b{r}.ckpt")
        result = compare_files(files["train"][r], b)
        f = finding(result, "slot_mismatch")
        assert codes(result) == {"slot_mismatch"} and len(f["slots"]) == 3
        assert f["shift"]["direction"] == direction and f["shift"]["slots"] is None


def test_a_true_reordering_is_still_a_permutation(dataset, tmp_path):
    w, files = dataset[1]
    for r in range(BATCH):
        rec = w.single(r, (AUX[2], AUX[0], AUX[1]), torch.bfloat16)
        result = compare_files(files["train"][r], save(rec, tmp_path / f"p{r}.ckpt"))
        assert codes(result) == {"slot_permutation"}, result["findings"]
        assert finding(result, "slot_permutation")["mapping"] == [2, 0, 1]


# ------------------------------------------------------------------------------ lag without ids


@pytest.mark.parametrize("start", [2, 5])
def test_capture_without_ids_that_lines_up_only_at_a_lag_is_a_token_shift(dataset, tmp_path, start):
    w, files = dataset[2]
    for r in range(BATCH):
        rec = w.single(r, AUX, torch.bfloat16)
        bare = rec["aux_hidden_state"][0, start:]  # row 0 is the prompt's token `start`
        result = compare_files(files["train"][r], save(bare, tmp_path / f"lag{r}.pt"))
        f = finding(result, "token_shift")
        assert codes(result) == {"token_shift"} and f["severity"] == "warning" and f["offset"] == start
        assert "should carry its token ids" in f["message"]
        assert result["alignment"]["method"] == "hidden" and result["alignment"]["offset"] == start


# ------------------------------------------------------------------------------ zero states


def test_all_zero_capture_is_named_zero_states(dataset, tmp_path):
    w, files = dataset[0]
    for r in range(BATCH):
        rec = w.single(r, AUX, torch.bfloat16)
        rec["aux_hidden_state"] = torch.zeros_like(rec["aux_hidden_state"])
        rec["hidden_state"] = torch.zeros_like(rec["hidden_state"])
        result = compare_files(files["train"][r], save(rec, tmp_path / f"z{r}.ckpt"))
        assert codes(result) == {"zero_states"}, result["findings"]
        f = finding(result, "zero_states")
        assert f["b"]["all_zero"] == ["aux0", "aux1", "aux2", "final"] and "a" not in f
        assert "-1.000" not in f["message"]
        assert all(v is None for row in result["matrix"] for v in row)


def test_rows_left_zero_by_the_capture_are_named_and_left_out(dataset, tmp_path):
    w, files = dataset[1]
    rec = w.single(0, AUX, torch.bfloat16)
    n = rec["input_ids"].numel()
    rec["aux_hidden_state"][0, n - 10:, 64:128] = 0  # slot 1's last 10 rows never written
    result = compare_files(files["train"][0], save(rec, tmp_path / "z.ckpt"))
    f = finding(result, "zero_states")
    assert codes(result) == {"zero_states"}
    assert f["b"]["zero_rows"] == {"aux1": 10} and f["b"]["first_row"] == n - 10
    assert result["slots"][1]["tokens"] == n - 10 and result["slots"][1]["cos_mean"] > 0.999
