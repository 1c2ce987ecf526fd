"""summary --model and compare --model: identified boundaries where the user already looks.

The tiny Llama's captures sit at known boundaries; the identified ones must be exactly those,
marked as identified, next to what the file itself says."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import warm_cli
from tests.helpers.identify_world import DEFAULT, L
from tests.identify.test_cli import ROOT

DEEPER = tuple(b + 1 for b in DEFAULT)


def run(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from eagle3_tui.cli import main; sys.exit(main(sys.argv[1:]))"
    return warm_cli.run([sys.executable, "-c", code, *args], text=True,
                        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))


def table_rows(out: str) -> dict[str, str]:
    """slot label -> its `where` cell of the summary table."""
    return {w[0]: w[1] for w in (line.split() for line in out.splitlines())
            if len(w) > 2 and w[0] in ("aux0", "aux1", "aux2", "final")}


def test_summary_model_json_gives_each_slot_its_identified_boundary(world):
    sf = world.specforge("sf.ckpt")
    pre = world.specforge("pre.ckpt", DEEPER, final="pre")
    p = run("summary", str(sf), str(pre), "--model", str(world.model), "--json")
    assert p.returncode == 0, p.stderr
    first, second = (json.loads(line) for line in p.stdout.splitlines())
    assert [s["identified"]["boundary"] for s in first["slots"]] == list(DEFAULT)
    assert [s["boundary"] for s in first["slots"]] == [None, None, None]  # SpecForge records none
    assert set(first["slots"][0]["identified"]) >= {"boundary", "cosine", "status"}
    assert first["slots"][0]["identified"]["status"] == "match" and first["slots"][0]["identified"]["cosine"] > 0.999
    assert first["final"]["identified"]["norm"] == "post" and first["final"]["identified"]["boundary"] is None
    assert first["identify"]["layers"] == L and first["identify"]["convention"]["follows"] == "output"
    assert [s["identified"]["boundary"] for s in second["slots"]] == list(DEEPER)
    assert second["final"]["identified"]["boundary"] == L  # the final norm's input
    # the statistics are the summary's own, identical with and without --model
    plain = json.loads(run("summary", str(sf), "--json").stdout)
    assert [s["norm_mean"] for s in plain["slots"]] == [s["norm_mean"] for s in first["slots"]]
    assert "identified" not in plain["slots"][0] and "identify" not in plain


def test_summary_model_table_marks_identified_boundaries(world):
    p = run("summary", str(world.specforge("sf.ckpt")), "--model", str(world.model))
    assert p.returncode == 0, p.stderr
    assert table_rows(p.stdout) == {"aux0": "b=2*", "aux1": "b=4*", "aux2": "b=5*", "final": "post*"}
    assert "*: identified against" in p.stdout
    # the speculators layout labels nothing either; its last state is the final norm's input
    p = run("summary", str(world.speculators("hs_0.safetensors")), "--model", str(world.model))
    assert table_rows(p.stdout) == {"aux0": "b=2*", "aux1": "b=4*", "aux2": "b=5*", "final": f"b={L}*"}
    plain = run("summary", str(world.specforge("sf.ckpt")))
    assert table_rows(plain.stdout)["aux0"] == "b=?"


def test_summary_model_that_is_not_a_model_keeps_the_summary_and_says_why(world, tmp_path):
    """A --model folder that cannot be used is a usage error (exit 2, issue 21); the summary stands."""
    p = run("summary", str(world.specforge("sf.ckpt")), "--model", str(tmp_path))
    assert p.returncode == 2
    assert table_rows(p.stdout)["aux0"] == "b=?"
    assert "not identified:" in p.stdout
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and "--model: model" in err[0] and "no config.json" in err[0]


def _finding(r: dict, code: str) -> dict:
    return next(f for f in r["findings"] if f["code"] == code)


def test_compare_model_names_the_exact_boundaries_of_a_one_deeper_capture(world):
    a, b = world.specforge("train.ckpt"), world.specforge("deeper.ckpt", DEEPER)
    p = run("compare", str(a), str(b), "--model", str(world.model), "--json")
    assert p.returncode == 1, p.stderr
    r = json.loads(p.stdout)
    m = _finding(r, "slot_mismatch")["message"]
    assert "B slot 0 is b = 3, A slot 0 is b = 2: every B slot one boundary deeper: layer ids read as the " \
           "output of the layer on B's side and its input on A's" in m
    assert "vLLM default ids [2, 4, 5]" in m
    assert _finding(r, "slot_mismatch")["identified"] == {"a": list(DEFAULT), "b": list(DEEPER)}
    assert _finding(r, "slot_mismatch")["shift"]["boundaries"] == 1  # the files say nothing; the model does
    ident = _finding(r, "slots_identified")["message"]
    assert "A slots b {2, 4, 5}" in ident and "B slots b {3, 5, 6}" in ident
    # without --model: the one-off is suspected, never named exactly
    plain = json.loads(run("compare", str(a), str(b), "--json").stdout)
    assert "b = 3" not in _finding(plain, "slot_mismatch")["message"] and "identified" not in plain


def test_compare_model_names_the_boundaries_of_a_permutation(world):
    a = world.specforge("train.ckpt")
    b = world.specforge("perm.ckpt", (DEFAULT[2], DEFAULT[0], DEFAULT[1]))
    p = run("compare", str(a), str(b), "--model", str(world.model))
    assert p.returncode == 1, p.stderr
    line = next(x for x in p.stdout.splitlines() if "slot_permutation" in x)
    assert "B slot 0 is b = 5, A slot 0 is b = 2, B slot 1 is b = 2, A slot 1 is b = 4, " \
           "B slot 2 is b = 4, A slot 2 is b = 5" in line


def test_compare_model_that_cannot_run_is_one_line_and_exit_2(world, tmp_path):
    a, b = world.specforge("train.ckpt"), world.specforge("deeper.ckpt", DEEPER)
    p = run("compare", str(a), str(b), "--model", str(tmp_path / "nope"))
    assert p.returncode == 2
    assert "FINDINGS" in p.stdout  # the comparison itself stands
    assert p.stderr.strip().splitlines() == [f"eagle3-tui compare: --model: model {tmp_path / 'nope'}: no such folder"]


pytestmark_remote = pytest.mark.asyncio(loop_scope="session")


@pytestmark_remote
async def test_remote_summary_model_is_identified_on_the_box(server, shared_box, world):
    box = await shared_box()
    r = await box.summarize(str(world.specforge("sf.ckpt")), model=str(world.model))
    assert r["computed"] == "remote"
    assert [s["identified"]["boundary"] for s in r["slots"]] == list(DEFAULT)
    r = await box.compare(str(world.specforge("train.ckpt")), str(world.specforge("deeper.ckpt", DEEPER)),
                          model=str(world.model))
    assert r["computed"] == "remote"
    assert "B slot 0 is b = 3, A slot 0 is b = 2" in _finding(r, "slot_mismatch")["message"]


@pytestmark_remote
async def test_remote_summary_model_without_transformers_keeps_the_summary(server, shared_box, world,
                                                                            python_without_transformers):
    box = await shared_box(python_without_transformers)
    r = await box.summarize(str(world.specforge("sf.ckpt")), model=str(world.model))
    assert r["computed"] == "remote" and r["slots"][0]["norm_mean"] > 0
    assert r["identify"]["error"] == "transformers is not installed here: pip install eagle3-tui[model]"
    assert "identified" not in r["slots"][0]


@pytestmark_remote
async def test_cli_summary_model_over_ssh(home, world):  # noqa: F811 - OpenSSH only, as test_remote does
    from tests.helpers.ssh import cli

    sample = world.specforge("sf.ckpt")
    rc, out, err = await cli(home, "summary", f"box:{sample}", "--model", f"box:{world.model}")
    assert rc == 0, err
    assert table_rows(out) == {"aux0": "b=2*", "aux1": "b=4*", "aux2": "b=5*", "final": "post*"}
    assert "computed remote" in out
