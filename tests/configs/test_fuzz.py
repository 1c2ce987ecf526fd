"""Fuzz over config values: wrong types, 0, negative, huge, NaN, strings, lists, in the model,
drafter and tokenizer folders, for every command that reads them.

In process, every key of the checked reader (engines/model/folder_config.py) with every value: one
line, no other exception. Through the CLI, every command with every value (the keys taking
turns, so each key is met by every command over the set): exit 2 and one line on stderr, no
traceback, within a timeout (a hang fails) and a memory limit (runaway memory fails).
"""

from __future__ import annotations

import pytest

from eagle3_tui.engines.model.accept import cached_drafter
from eagle3_tui.engines.model.drafter import DrafterError, load_drafter
from eagle3_tui.engines.model.folder_config import (
    FolderConfigError,
    read_model_config,
    tokenizer_vocab,
)
from tests.helpers.folder_world import run_cli, said_in_one_line, tokenizer_json

VALUES = {"string": "x", "zero": 0, "negative": -1, "huge": 10**15, "nan": float("nan"), "list": [1]}
MODEL_KEYS = ("num_hidden_layers", "hidden_size", "vocab_size", "torch_dtype", "rms_norm_eps", "rope_theta",
              "tie_word_embeddings", "intermediate_size", "num_attention_heads")
DRAFTER_KEYS = ("rms_norm_eps", "rope_theta", "num_attention_heads", "head_dim", "target_hidden_size",
                "vocab_size", "draft_vocab_size", "norm_output")


def _turns(keys: tuple[str, ...], command: int) -> list[tuple[str, str]]:
    """(key, value name) per value, the keys taking turns, shifted per command."""
    names = list(VALUES)
    return [(keys[(i + 3 * command) % len(keys)], name) for i, name in enumerate(names)]


# ---------------------------------------------------------------------------- in process: every pair


@pytest.mark.parametrize("key", MODEL_KEYS)
def test_every_bad_model_value_is_one_line(folders, key):
    for name, value in VALUES.items():
        with pytest.raises(FolderConfigError) as err:
            read_model_config(str(folders.model_with(key, value)))
        assert key in str(err.value) and "\n" not in str(err.value), (name, str(err.value))


@pytest.mark.parametrize("key", DRAFTER_KEYS)
def test_every_bad_drafter_value_is_one_line(folders, key):
    for name, value in VALUES.items():
        with pytest.raises(DrafterError) as err:
            load_drafter(str(folders.drafter_with(key, value)))
        assert key in str(err.value) and "\n" not in str(err.value), (name, str(err.value))


def test_nested_drafter_settings_are_checked_too(folders):
    """speculators nests the layer's settings, newer configs keep rope_theta in rope_parameters."""
    for key, value in (("transformer_layer_config", {"rms_norm_eps": "x"}),
                       ("rope_parameters", {"rope_theta": float("nan")}), ("rope_scaling", "linear")):
        with pytest.raises(DrafterError) as err:
            load_drafter(str(folders.drafter_with(key, value)))
        assert "\n" not in str(err.value)


#: 0 is a token id like any other
TOKEN_VALUES = [name for name in VALUES if name != "zero"]


def test_every_bad_token_id_in_a_tokenizer_json_is_one_line():
    for name in TOKEN_VALUES:
        value = VALUES[name]
        tok = tokenizer_json()
        tok["model"]["vocab"]["w5"] = value
        with pytest.raises(FolderConfigError) as err:
            tokenizer_vocab("tokenizer.json", tok)
        assert "token id" in str(err.value) and "\n" not in str(err.value), name
    tok = tokenizer_json()
    tok["added_tokens"] = [{"id": "seven", "content": "<s>"}]
    with pytest.raises(FolderConfigError):
        tokenizer_vocab("tokenizer.json", tok)


def test_the_good_folders_pass(folders):
    assert read_model_config(str(folders.model)).layers == 8
    assert cached_drafter(str(folders.drafter), str(folders.model)).draft_vocab == 256


# ---------------------------------------------------------------------------- every command


MODEL_COMMANDS = {
    "identify": lambda f, m: ["identify", f.sample, "--model", m],
    "summary --model": lambda f, m: ["summary", f.sample, "--model", m],
    "scan --model": lambda f, m: ["scan", f.data, "--model", m, "--workers", "1"],
    "accept --model": lambda f, m: ["accept", f.sample, "--drafter", f.drafter, "--model", m],
}
DRAFTER_COMMANDS = {
    "accept": lambda f, d: ["accept", f.sample, "--drafter", d],
    "scan --drafter": lambda f, d: ["scan", f.data, "--drafter", d, "--workers", "1"],
    "scan --accept": lambda f, d: ["scan", f.data, "--accept", d, "--workers", "1"],
}


@pytest.mark.parametrize("command, key, value", [
    (c, k, v) for i, c in enumerate(MODEL_COMMANDS) for k, v in _turns(MODEL_KEYS, i)])
def test_model_values_through_each_command(folders, command, key, value):
    p = run_cli(*MODEL_COMMANDS[command](folders, folders.model_with(key, VALUES[value])))
    if command == "summary --model":  # the summary stands (stdout), the usage error is exit 2
        assert "not identified:" in p.stdout
    assert key in said_in_one_line(p)


@pytest.mark.parametrize("command, key, value", [
    (c, k, v) for i, c in enumerate(DRAFTER_COMMANDS) for k, v in _turns(DRAFTER_KEYS, i)])
def test_drafter_values_through_each_command(folders, command, key, value):
    p = run_cli(*DRAFTER_COMMANDS[command](folders, folders.drafter_with(key, VALUES[value])))
    assert key in said_in_one_line(p)


@pytest.mark.parametrize("value", TOKEN_VALUES)
def test_tokenizer_values_through_accept_and_summary(folders, value):
    """accept --model reads the model's tokenizer.json (the text of the misses): a bad id is the
    model folder's fault, exit 2. summary --tokenizer shows text beside the numbers: a tokenizer
    that cannot be read is one line in the report and the exit status stands (README, "text")."""
    model = folders.tokenizer_with(VALUES[value])
    line = said_in_one_line(run_cli("accept", folders.sample, "--drafter", folders.drafter, "--model", model))
    assert "tokenizer.json: a model.vocab" in line
    p = run_cli("summary", folders.sample, "--tokenizer", model)
    assert p.returncode == 0 and p.stderr == "", p.stderr[-2000:]
    (said,) = [line for line in p.stdout.splitlines() if line.strip().startswith("text:")]
    assert "tokenizer.json" in said


def test_every_bad_layer_id_list_of_a_drafter_is_one_line(folders):
    from eagle3_tui.engines.model.conventions import drafter_layer_ids

    values = [(n, v) for n, v in VALUES.items() if n != "list"]  # [1] is a list of layer ids
    for name, value in [*values, ("empty", []), ("ids", [1, "x", 6]), ("huge id", [1, 10**9]), ("negative id", [-2])]:
        bad = folders.drafter_with("eagle_config", {"eagle_aux_hidden_state_layer_ids": value})
        with pytest.raises(FolderConfigError) as err:
            drafter_layer_ids(str(bad))
        assert "eagle_aux_hidden_state_layer_ids" in str(err.value) and "\n" not in str(err.value), name


@pytest.mark.parametrize("value", ["string", "huge"])
def test_layer_ids_through_identify_and_scan_model(folders, value):
    bad = folders.drafter_with("eagle_config", {"eagle_aux_hidden_state_layer_ids": [1, VALUES[value]]})
    line = said_in_one_line(run_cli("identify", folders.sample, "--model", folders.model, "--drafter", bad))
    assert "eagle_aux_hidden_state_layer_ids holds" in line
