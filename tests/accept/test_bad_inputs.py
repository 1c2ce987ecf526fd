"""Unusable drafters and samples give one line that names the problem (exit 2 on the CLI)."""

from __future__ import annotations

import json
import os
import sys

import pytest
import torch

from eagle3_tui.engines.model.accept import accept_file
from tests.helpers import warm_cli
from tests.helpers.drafter import save_drafter
from tests.helpers.ssh import write_sample


class Evil:
    def __reduce__(self):
        return (os.system, ("touch PWNED_accept",))


def _bad_folders(trained, tmp) -> dict:
    w = trained.weights
    out = {}
    out["not a folder"] = (str(trained.data / "train_0.ckpt"), "not a folder")
    (tmp / "empty").mkdir()
    out["no config"] = (str(tmp / "empty"), "no config.json")
    (tmp / "noweights").mkdir()
    (tmp / "noweights" / "config.json").write_text("{}")
    out["no weights"] = (str(tmp / "noweights"), "no drafter weights")
    (tmp / "badjson").mkdir()
    (tmp / "badjson" / "config.json").write_text("{not json")
    out["bad config"] = (str(tmp / "badjson"), "unreadable config")
    # a target model's folder is not a drafter
    out["a model"] = (str(trained.model), "no drafter weights")
    out["missing layer"] = (save_drafter(str(tmp / "nolayer"), w, drop=("midlayer.self_attn.q_proj.weight",)),
                            "not an EAGLE-3 drafter: weights lack midlayer.self_attn.q_proj.weight")
    (tmp / "trunc").mkdir()
    (tmp / "trunc" / "config.json").write_text("{}")
    header = json.dumps({"fc.weight": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}}).encode()
    (tmp / "trunc" / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 10)
    out["truncated"] = (str(tmp / "trunc"), "past the end of the file")
    (tmp / "evil").mkdir()
    (tmp / "evil" / "config.json").write_text("{}")
    torch.save({"fc.weight": Evil()}, tmp / "evil" / "pytorch_model.bin")
    out["pickle with code"] = (str(tmp / "evil"), "refused")
    return out


def test_bad_drafter_folders_name_the_problem(trained, tmp_path):
    for what, (folder, expect) in _bad_folders(trained, tmp_path).items():
        r = accept_file(str(trained.data / "train_0.ckpt"), folder)
        assert expect in r.get("error", ""), (what, r)
        assert "\n" not in r["error"]
    assert not list(tmp_path.glob("PWNED*")) and not os.path.exists("PWNED_accept")


def test_a_sample_that_does_not_fit_the_drafter_width(trained, tmp_path):
    write_sample(tmp_path / "h32.ckpt", seed=1, h=32)  # 3 slots of 32: the drafter takes 3 x 64
    r = accept_file(str(tmp_path / "h32.ckpt"), str(trained.drafter))
    assert "hidden size is 32" in r["error"] and "3x64 = 192" in r["error"]
    write_sample(tmp_path / "k2.ckpt", seed=1, h=64, k=2)  # 2 slots: fc expects k = 3
    r = accept_file(str(tmp_path / "k2.ckpt"), str(trained.drafter))
    assert "fc expects k*H = 3x64 = 192" in r["error"] and "2 aux slot(s)" in r["error"]
    torch.save({"aux_hidden_state": torch.randn(1, 20, 192)}, tmp_path / "noids.pt")
    r = accept_file(str(tmp_path / "noids.pt"), str(trained.drafter))
    assert "no token ids" in r["error"]
    r = accept_file(str(trained.data / "train_0.ckpt"), str(trained.drafter), order=[0, 0])
    assert "--order needs 3 slot indices" in r["error"]


def _cli(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    return warm_cli.run([sys.executable, "-m", "eagle3_tui", "accept", *args], text=True, env=env, cwd=cwd,
                        timeout=120)


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_cli_exits_2_with_one_line_on_a_bad_drafter(trained, tmp_path, extra):
    (tmp_path / "empty").mkdir()
    p = _cli(str(trained.data / "train_0.ckpt"), "--drafter", str(tmp_path / "empty"), *extra)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    if extra:
        assert "no config.json" in json.loads(p.stdout)["error"]
    else:
        assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1 and "no config.json" in p.stderr


def test_cli_rejects_bad_options_in_one_line(trained):
    p = _cli(str(trained.data / "train_0.ckpt"), "--drafter", str(trained.drafter), "--steps", "0")
    assert p.returncode == 2 and "--steps must be at least 1" in p.stderr
    p = _cli(str(trained.data / "train_0.ckpt"), "--drafter", str(trained.drafter), "--order", "a,b")
    assert p.returncode == 2 and "--order" in p.stderr and "Traceback" not in p.stderr
