"""Values no real folder holds, as a hostile tester wrote them, run as a user runs the commands:
a drafter whose weights name layer 50,000,000 (accept and the TUI's start-up check grew to 3.5 GB
and died), a 4,000-digit number or a 10,000-character string in a model's or a drafter's
config.json (a 4,119-character error line; some of them a traceback). Each is one short line."""

from __future__ import annotations

import json
import re
import sys

import pytest
import torch

from tests.helpers import warm_cli
from tests.helpers.drafter import config as drafter_config
from tests.helpers.folder_world import MEMORY, TIMEOUT, VOCAB, run_cli, said_in_one_line
from tests.helpers.processes import subprocess_env

HUGE = int("9" * 4000)  # 4,000 digits (json.dumps writes them all; Python reads up to 4,300)
LONG = "x" * 10_000
#: what a line may quote of a value: never 41 of its characters in a row
QUOTED_WHOLE = re.compile(r"x{41}|9{41}")
GIB = 1 << 30

#: `eagle3-tui ARGS`, then the run's peak resident memory on stderr's last line
_PEAK = """
import sys
from eagle3_tui.cli import main
rc = main(sys.argv[1:])
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print("PEAK", peak * 1024, file=sys.stderr)
sys.exit(rc)
"""

#: the TUI's start-up check (ui/start/analysis_check.py runs it in a worker) on a drafter folder
_STARTUP_CHECK = """
import sys
from eagle3_tui.engines.model.folder_check import check_folders
print(check_folders(None, sys.argv[1]).get("drafter"))
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print("PEAK", peak * 1024)
"""


def _python(script: str, *args) -> tuple[int, str, str]:
    p = warm_cli.run([sys.executable, "-c", script, *map(str, args)], text=True, env=subprocess_env(),
                     timeout=TIMEOUT, memory=MEMORY)
    return p.returncode, p.stdout, p.stderr


def _peak(text: str) -> tuple[list[str], int]:
    *lines, last = [line for line in text.splitlines() if line.strip()]
    word, peak = last.split()
    assert word == "PEAK", text[-2000:]
    return lines, int(peak)


def _cfg_without_layer_count() -> dict:
    cfg = {**drafter_config(VOCAB), "vocab_size": VOCAB}
    del cfg["num_hidden_layers"]  # the count then comes from the weights' names
    return cfg


@pytest.mark.parametrize("index, said", [("50000000", "50000000"), ("9" * 5000, "9" * 39 + "…")],
                         ids=["50000000", "5000 digits"])
def test_a_drafter_whose_weights_name_layer_50000000_is_refused_in_one_line_in_little_memory(folders, index, said):
    def far_layer(weights):
        weights[f"layers.{index}.mlp.up_proj.weight"] = torch.ones(2, 2)

    bad = folders.write_drafter(folders.root / f"far-layer-{len(index)}", cfg=_cfg_without_layer_count(),
                                change=far_layer)
    rc, out, err = _python(_PEAK, "accept", folders.sample, "--drafter", bad)
    lines, peak = _peak(err)
    assert rc == 2 and out == "" and len(lines) == 1, err[-2000:]
    assert "Traceback" not in err and "Warning" not in err
    assert f"the drafter's weights name layer {said} " in lines[0], lines[0]
    assert "config.json has no num_hidden_layers; a drafter has at most 64" in lines[0]
    assert len(lines[0].replace(str(folders.root), "ROOT")) < 200, lines[0]  # (the paths as long as they are)
    assert peak < 1.5 * GIB, f"accept peaked at {peak / GIB:.2f} GiB"

    rc, out, err = _python(_STARTUP_CHECK, bad)
    lines, peak = _peak(out)
    assert rc == 0 and "Traceback" not in err, err[-2000:]
    assert lines == [lines[0]] and f"the drafter's weights name layer {said} " in lines[0], out
    assert peak < 1.5 * GIB, f"the start-up check peaked at {peak / GIB:.2f} GiB"


def test_a_drafter_of_64_layers_by_its_weights_is_still_read_to_the_layer_count(folders):
    """The cap is at 64: a drafter naming layer 63 (and no num_hidden_layers) is read as 64 layers,
    and refused for what it lacks, not for its count."""
    def layer_63(weights):
        weights["layers.63.mlp.up_proj.weight"] = torch.ones(2, 2)

    folder = folders.write_drafter(folders.root / "layer-63", cfg=_cfg_without_layer_count(), change=layer_63)
    line = said_in_one_line(run_cli("accept", folders.sample, "--drafter", folder))
    assert "at most 64" not in line and "weights lack layers.1." in line, line


# ------------------------------------------------------------------ values too long to quote


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
    # a finding wraps at 100 columns, its lines after the first indented (issue 56)
    found: list[str] = []
    for line in p.stdout.split("\nfindings:\n")[1].splitlines():
        if line.startswith("   ") and found:
            found[-1] += " " + line.strip()
        else:
            found.append(line)
    bad = [entry for entry in found if "serving_bad_ids" in entry]
    assert len(bad) == 2, bad
    assert '["' + "x" * 37 + "…: " in bad[0] and "x" * 38 + "… is not an integer" in bad[0], bad[0][:400]
    assert '"' + "y" * 38 + "…: " in bad[1] and "is not a list" in bad[1], bad[1][:400]
    flat = " ".join(p.stdout.split())
    assert "fc for a number of 4,000 digits states" in flat or "fc takes a number of 4,000 digits states" in flat
