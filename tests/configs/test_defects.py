"""Issue 21, items 4-7 and 12: each defect as a user met it, run as a user runs the commands."""

from __future__ import annotations

import os
import pickle
import warnings

import pytest
import torch

from tests.helpers.folder_world import VOCAB, run_cli, said_in_one_line

# ------------------------------------------------------------------ 4: a drafter config that is not numbers


@pytest.mark.parametrize("key", ["rms_norm_eps", "rope_theta"])
def test_scan_drafter_with_a_non_numeric_value_ends_in_one_line_not_a_hang(folders, key):
    bad = folders.drafter_with(key, "fast")
    p = run_cli("scan", folders.data, "--drafter", bad, "--workers", "1")
    line = said_in_one_line(p)
    assert f"--drafter: {bad}: config.json {key} is the string \"fast\", not a number" in line


def test_accept_and_scan_accept_with_a_non_numeric_eps_say_it_in_one_line(folders):
    bad = folders.drafter_with("rms_norm_eps", "abc")
    line = said_in_one_line(run_cli("accept", folders.sample, "--drafter", bad))
    assert "rms_norm_eps is the string \"abc\", not a number" in line
    line = said_in_one_line(run_cli("scan", folders.data, "--accept", bad, "--workers", "1"))
    assert line.startswith("eagle3-tui: scan: --accept: ") and "rms_norm_eps" in line


# ------------------------------------------------------------------ 5: a layer count the weights do not hold


@pytest.mark.parametrize("layers, said", [(10**9, "out of range (1..1024)"), (9, "but the weights hold 8 layers")])
def test_a_layer_count_the_weights_do_not_hold_is_one_line(folders, layers, said):
    bad = folders.model_with("num_hidden_layers", layers)
    for command in (["identify", folders.sample], ["scan", folders.data, "--workers", "1"]):
        p = run_cli(*command, "--model", bad)
        line = said_in_one_line(p)
        assert f"config.json num_hidden_layers = {layers}" in line and said in line


@pytest.mark.parametrize("layers", [4, 9])
def test_a_config_that_names_fewer_or_more_layers_than_the_weights_stops_every_command(folders, layers):
    """config.json num_hidden_layers 4 with 8 layers in the weights loaded as a 4-layer model: identify
    blamed the data ("from another model"), serve-check proposed fixes for the wrong boundaries,
    accept scored against a truncated target. Each stops instead, naming both numbers."""
    bad = folders.model_with("num_hidden_layers", layers)
    for command in (["identify", folders.sample], ["accept", folders.sample, "--drafter", folders.drafter],
                    ["serve-check", folders.drafter, folders.data]):
        line = said_in_one_line(run_cli(*command, "--model", bad))
        assert "the model folder is inconsistent" in line, (command, line)
        assert f"num_hidden_layers = {layers} but the weights hold 8 layers" in line, (command, line)


@pytest.mark.parametrize("layers", [0, -1])
def test_layers_0_and_minus_1_are_out_of_range_not_missing(folders, layers):
    line = said_in_one_line(run_cli("identify", folders.sample, "--model", folders.model_with("num_hidden_layers", layers)))
    assert f"num_hidden_layers = {layers} is out of range" in line and "has no num_hidden_layers" not in line


# ------------------------------------------------------------------ 6: token ids outside the vocabulary


@pytest.fixture(scope="module")
def foreign(folders, tmp_path_factory):
    """The sample with one id past the model's (and the drafter's) 256 tokens."""
    folder = tmp_path_factory.mktemp("foreign")
    d = torch.load(folders.sample, weights_only=True)
    d["input_ids"] = d["input_ids"].clone()
    d["input_ids"][5] = 5000
    torch.save(d, folder / "x.ckpt")
    return folder


def test_ids_outside_the_vocabulary_are_one_line_in_identify_and_accept(folders, foreign):
    line = said_in_one_line(run_cli("identify", foreign / "x.ckpt", "--model", folders.model))
    assert f"token id 5000 is outside the vocabulary of model {folders.model} ({VOCAB} tokens)" in line
    for extra in ([], ["--model", folders.model]):
        line = said_in_one_line(run_cli("accept", foreign / "x.ckpt", "--drafter", folders.drafter, *extra))
        assert f"token id 5000 is outside the drafter's vocabulary ({VOCAB} tokens)" in line


def test_ids_outside_the_vocabulary_in_summary_and_scan_are_said_not_raised(folders, foreign):
    # summary --model: the summary stands, the file is not identified (exit 1), one line says why
    p = run_cli("summary", foreign / "x.ckpt", "--model", folders.model)
    assert "token id 5000 is outside the vocabulary" in said_in_one_line(p, code=1)
    assert "not identified:" in p.stdout
    p = run_cli("scan", foreign, "--model", folders.model, "--workers", "1")
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert "identify_failed" in p.stdout and "token id 5000 is outside the vocabulary" in p.stdout
    p = run_cli("scan", foreign, "--drafter", folders.drafter, "--workers", "1")
    assert "Traceback" not in p.stderr and "ERROR   unreadable" not in p.stdout, p.stdout + p.stderr[-2000:]
    assert "outside the drafter's vocabulary" in p.stdout


# ------------------------------------------------------------------ 7: a drafter's weights and vocab maps


def _nan(w):
    w["midlayer.mlp.up_proj.weight"][0, 0] = float("nan")


def _d2t_out(w):
    w["d2t"] = torch.full((VOCAB,), 300, dtype=torch.int64)


def _t2d_short(w):
    w["d2t"] = torch.zeros(VOCAB, dtype=torch.int64)
    w["t2d"] = torch.ones(100, dtype=torch.bool)


def _t2d_unmarked(w):
    w["d2t"] = torch.zeros(VOCAB, dtype=torch.int64)
    w["t2d"] = torch.zeros(VOCAB, dtype=torch.bool)


@pytest.mark.parametrize("change, said", [
    (_nan, "weights hold NaN or Inf (midlayer.mlp.up_proj.weight)"),
    (_d2t_out, "d2t points at target id 555, outside the target vocabulary of 256"),
    (_t2d_short, "t2d has 100 entries, vocab_size is 256"),
    (_t2d_unmarked, "t2d marks 0 target tokens but d2t has 256"),
])
def test_a_drafter_that_cannot_draft_is_refused_in_one_line(folders, tmp_path, change, said):
    bad = folders.write_drafter(tmp_path / "d", change=change)
    line = said_in_one_line(run_cli("accept", folders.sample, "--drafter", bad))
    assert said in line


def test_a_draft_vocab_size_that_disagrees_with_the_head_is_one_line(folders):
    bad = folders.drafter_with("draft_vocab_size", 128)
    line = said_in_one_line(run_cli("accept", folders.sample, "--drafter", bad))
    assert "config.json draft_vocab_size = 128 but lm_head has 256 rows" in line


# ------------------------------------------------------------------ the target read once, checked


def test_accept_reads_the_target_model_through_the_checked_reader(folders):
    """accept --model used to read the target's config leniently (identify strictly)."""
    bad = folders.model_with("num_hidden_layers", "eight")
    line = said_in_one_line(run_cli("accept", folders.sample, "--drafter", folders.drafter, "--model", bad))
    assert "num_hidden_layers is the string \"eight\", not a whole number" in line


# ------------------------------------------------------------------ 12: cosmetics


class _Runs:
    def __reduce__(self):
        return (os.system, ("touch PWNED_configs",))


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    folder = tmp_path_factory.mktemp("refused")
    with open(folder / "plain.pkl", "wb") as fh:
        pickle.dump({"d2t": _Runs()}, fh, protocol=4)
    with warnings.catch_warnings():  # torch.jit says it is deprecated: a TorchScript file is what we need
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), str(folder / "script.pt"))
    return folder


@pytest.mark.parametrize("name, said", [("plain.pkl", "refused by safe loading"), ("script.pt", "TorchScript")])
def test_torchs_advice_to_load_unsafely_never_reaches_the_user(folders, refused, name, said):
    p = run_cli("scan", folders.data, "--vocab-mapping", refused / name, cwd=refused)
    line = said_in_one_line(p)
    assert said in line and "False" not in line and "Re-running" not in line
    assert not (refused / "PWNED_configs").exists()


def test_a_model_whose_weights_are_a_refused_pickle_gets_no_advice(folders, tmp_path):
    model = tmp_path / "pickled"
    model.mkdir()
    (model / "config.json").write_text((folders.model / "config.json").read_text())
    torch.save({"model.embed_tokens.weight": _Runs()}, model / "pytorch_model.bin")
    line = said_in_one_line(run_cli("identify", folders.sample, "--model", model, cwd=tmp_path))
    assert "safe loading (weights_only) refuses" in line and "False" not in line and "Re-running" not in line
    assert not (tmp_path / "PWNED_configs").exists()


def test_the_scan_table_prints_token_counts_as_whole_numbers():
    from eagle3_tui.commands.scan import format_report

    part = {"norm_mean": 9.5, "nan": 0, "inf": 0}
    record = {"path": "big.ckpt", "shard": "", "k": 3, "hidden": 64, "dtype": "bfloat16", "tokens": 100000,
              "valid_tokens": 99999, "slots": [part] * 3, "final": part}
    summary = {"files": 1, "samples": 1, "errors": 0, "not_samples": 0, "cached": 0, "mode": "full",
               "bytes_read": 0, "bytes_total": 0, "seconds": 1.0, "interrupted": False}
    text = format_report([record], [], summary)
    (row,) = [line for line in text.splitlines() if line.startswith(".")]
    assert "100000" in row.split() and "99999" in row.split() and "e+" not in row
