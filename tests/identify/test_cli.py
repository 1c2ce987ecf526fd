"""`eagle3-tui identify` run as a user would: exit codes, the JSON, one line on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import warm_cli
from tests.helpers.identify_world import DEFAULT, L

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, pre: str = "") -> subprocess.CompletedProcess:
    code = f"{pre}import sys; from eagle3_tui.cli import main; sys.exit(main(sys.argv[1:]))"
    return warm_cli.run([sys.executable, "-c", code, "identify", *args], text=True,
                        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))


def test_json_and_exit_0_when_everything_is_identified(world):
    p = cli(str(world.specforge("sf.ckpt")), "--model", str(world.model), "--json", "--device", "cpu")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert {"path", "model", "layers", "slots", "final", "findings", "computed"} <= set(r)
    assert r["computed"] == "local" and r["layers"] == L
    assert [s["boundary"] for s in r["slots"]] == list(DEFAULT)
    assert {"label", "boundary", "cosine", "norm_ratio", "second"} <= set(r["slots"][0])
    assert set(r["slots"][0]["second"]) == {"boundary", "cosine"}
    assert r["final"]["norm"] == "post" and 0.999 < r["final"]["cosine"] <= 1.0001
    assert p.stderr == ""  # no progress bars from transformers


def test_exit_1_and_the_table_for_a_one_deeper_capture(world):
    deeper = tuple(b + 1 for b in DEFAULT)
    p = cli(str(world.specforge("deeper.ckpt", deeper)), "--model", str(world.model))
    assert p.returncode == 1, p.stderr
    assert "WARNING layer_convention" in p.stdout
    rows = [line.split() for line in p.stdout.splitlines() if line.strip().startswith("aux")]
    assert [int(r[1]) for r in rows] == list(deeper)


def test_exit_2_one_line_each(world, tmp_path):
    sample = str(world.specforge("sf.ckpt"))
    p = cli(sample, "--model", str(tmp_path))
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == f"eagle3-tui identify: model {tmp_path}: not a Hugging Face model folder (no config.json)"
    p = cli(sample, "--model", str(world.model), pre="sys_modules = __import__('sys').modules; sys_modules['transformers'] = None; ")
    assert p.returncode == 2
    assert p.stderr.strip() == "eagle3-tui identify: transformers is not installed here: pip install eagle3-tui[model]"
    p = cli(sample, "--model", str(world.model), "--tokens", "0")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


def test_a_model_folder_whose_weights_do_not_fit_its_config_is_one_line(world, tmp_path):
    """transformers raises RuntimeError for weights of another shape (a drafter's folder given
    as --model, a config edited by hand): one line and exit 2, not its traceback."""
    import json
    import shutil

    folder = tmp_path / "misfit"
    shutil.copytree(world.model, folder)
    config = json.loads((folder / "config.json").read_text())
    config["intermediate_size"] = config["intermediate_size"] * 2
    (folder / "config.json").write_text(json.dumps(config))
    p = cli(str(world.specforge("sf.ckpt")), "--model", str(folder))
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert p.stderr.strip() == (f"eagle3-tui identify: model {folder}: transformers cannot load it "
                                "(its weights have other shapes than its config.json says)")


def test_help_lists_identify_without_importing_torch():
    code = ("import sys; from eagle3_tui.cli import build_parser; build_parser().parse_args(['identify', '-h'])")
    p = subprocess.run([sys.executable, "-c", code + ""], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "--model" in p.stdout and "--drafter" in p.stdout
    code = "import sys; from eagle3_tui.cli import build_parser; build_parser(); print('torch' in sys.modules)"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.stdout.strip() == "False"
