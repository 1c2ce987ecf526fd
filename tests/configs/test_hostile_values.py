"""Values no real folder holds, as a hostile tester wrote them, run as a user runs the commands:
a 4,000-digit number or a 10,000-character string in a model's or a drafter's config.json (a
4,119-character error line; some of them a traceback). Each is one short line."""

from __future__ import annotations

import json
import re

import pytest

from tests.helpers.folder_world import run_cli, said_in_one_line

HUGE = int("9" * 4000)  # 4,000 digits (json.dumps writes them all; Python reads up to 4,300)
LONG = "x" * 10_000
#: what a line may quote of a value: never 41 of its characters in a row
QUOTED_WHOLE = re.compile(r"x{41}|9{41}")


def _one_short_line(p, root) -> str:
    """The one line of a run that stopped on a bad value: under 200 characters but for the paths
    of the test's folders it names (as long as pytest's temporary folders are)."""
    line = said_in_one_line(p)  # exit 2, one line, no traceback or warning
    assert not QUOTED_WHOLE.search(line), line[:300]
    assert len(line.replace(str(root), "ROOT")) < 200, f"{len(line)} characters: {line[:300]}"
    return line


MODEL_VALUES = [("num_hidden_layers", HUGE, "num_hidden_layers = a number of 4,000 digits is out of range"),
                ("hidden_size", LONG, 'hidden_size is the string "xxx'),
                ("rms_norm_eps", HUGE, "rms_norm_eps = a number of 4,000 digits is out of range"),
                ("torch_dtype", LONG, 'torch_dtype is the string "xxx')]


@pytest.mark.parametrize("key, value, said", MODEL_VALUES, ids=[f"{k}-{type(v).__name__}" for k, v, _ in MODEL_VALUES])
def test_a_huge_value_in_a_model_config_is_one_short_line(folders, key, value, said):
    bad = folders.model_with(key, value)
    for command in (["identify", folders.sample], ["accept", folders.sample, "--drafter", folders.drafter],
                    ["serve-check", folders.drafter, folders.data]):
        line = _one_short_line(run_cli(*command, "--model", bad), folders.root)
        assert said in line, (command, line)


DRAFTER_VALUES = [("num_hidden_layers", HUGE, "num_hidden_layers = a number of 4,000 digits is out of range"),
                  ("num_attention_heads", LONG, 'num_attention_heads is the string "xxx'),
                  ("rope_theta", HUGE, "rope_theta = a number of 4,000 digits is out of range"),
                  ("target_hidden_size", LONG, 'target_hidden_size is the string "xxx'),
                  ("architectures", HUGE, "")]


@pytest.mark.parametrize("key, value, said", DRAFTER_VALUES,
                         ids=[f"{k}-{type(v).__name__}" for k, v, _ in DRAFTER_VALUES])
def test_a_huge_value_in_a_drafter_config_is_one_short_line(folders, key, value, said):
    bad = folders.drafter_with(key, value)
    if not said:  # architectures, which only the layout is read from (it raised TypeError): no error at all
        p = run_cli("accept", folders.sample, "--drafter", bad)
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
        return
    for command in (["accept", folders.sample, "--drafter", bad], ["scan", folders.data, "--drafter", bad, "--workers", "1"]):
        line = _one_short_line(run_cli(*command), folders.root)
        assert said in line, (command, line)


def test_serve_check_quotes_huge_ids_cut_short(folders, tmp_path):
    """serve-check names a drafter's ids in its findings and table: each value quoted cut to 40
    characters (the findings' lines are long by design: each engine's reading is named)."""
    config = {**json.loads((folders.drafter / "config.json").read_text()),
              "eagle_config": {"eagle_aux_hidden_state_layer_ids": [LONG, HUGE, 6]},
              "eagle_aux_hidden_state_layer_ids": "y" * 10_000, "num_aux_hidden_states": HUGE}
    folder = tmp_path / "drafter"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    p = run_cli("serve-check", folder, folders.data, "--model", folders.model)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert not QUOTED_WHOLE.search(p.stdout) and "y" * 41 not in p.stdout, p.stdout[:3000]
    assert len(p.stdout) < 20_000, len(p.stdout)  # (every value whole: over 100,000)
    bad = [line for line in p.stdout.splitlines() if "serving_bad_ids" in line]
    assert len(bad) == 2, bad
    assert '["' + "x" * 37 + "…: " in bad[0] and "x" * 38 + "… is not an integer" in bad[0], bad[0][:400]
    assert '"' + "y" * 38 + "…: " in bad[1] and "is not a list" in bad[1], bad[1][:400]
    assert "fc for a number of 4,000 digits states" in p.stdout or "fc takes a number of 4,000 digits states" in p.stdout
