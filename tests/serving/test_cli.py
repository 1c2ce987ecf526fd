"""`serve-check` end to end: a dataset written with a tiny saved Llama (tests/helpers/scan_build.py,
b 2, 5, 7 of L = 10; one shard at b 1, 4, 6) identified by the same pipeline as `scan --model`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eagle3_tui.cli import main
from tests.helpers.hf_target import make_target
from tests.helpers.scan_build import build
from tests.helpers.serving import drafter


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return make_target(tmp_path_factory.mktemp("serve") / "llama")


@pytest.fixture(scope="module")
def data(tmp_path_factory, target) -> Path:
    root = tmp_path_factory.mktemp("serve-data")
    build(root, shards=2, seed=4, model=target)
    return root


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["serve-check", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_specforge_ids_serve_sglang_but_vllm_only_guesses(data, target, tmp_path, capsys):
    folder = drafter(tmp_path, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 4, 6]}})
    code, out, _ = run(capsys, folder, data, "--model", target.folder, "--json")
    last = json.loads(out.splitlines()[-1])
    assert last["data"]["boundaries"] == [2, 5, 7]
    engines = {(e["engine"], e["until"]): e for e in last["engines"]}
    assert engines[("sglang", None)]["matches"] and not engines[("sglang", None)]["guessed"]
    assert engines[("vllm", None)]["guessed"] and engines[("vllm", None)]["boundaries"] == [2, 5, 7]
    assert code == 0  # every current rule captures b 2, 5, 7 ...
    assert any(f["code"] == "serving_guessed" and f["engine"] == "vllm" for f in last["findings"])  # ... by a guess
    assert {"engine", "since", "until", "boundaries", "matches", "guessed", "why"} <= set(last["engines"][0])


def test_top_level_ids_read_the_other_way_fail_with_the_fix(data, target, tmp_path, capsys):
    # SpecForge-style "output of" ids put where vLLM reads them as boundaries: one boundary shallower
    folder = drafter(tmp_path, {"eagle_aux_hidden_state_layer_ids": [1, 4, 6]})
    code, out, _ = run(capsys, folder / "config.json", data, "--model", target.folder)
    assert code == 1
    assert "vLLM since 0.34.0 will capture b 1, 4, 6; the data holds b 2, 5, 7: every slot 1 boundary shallower" in out
    assert 'config.json: "eagle_aux_hidden_state_layer_ids": [2, 5, 7]  (top level)' in out


def test_unreadable_drafter_config_exits_2(data, target, tmp_path, capsys):
    folder = tmp_path / "drafter"
    folder.mkdir()
    (folder / "config.json").write_text("{not json")
    code, _, err = run(capsys, folder, data, "--model", target.folder)
    assert code == 2 and "not JSON" in err


def test_the_text_report_is_real_lines_verdict_and_fix_first_one_aligned_row_per_engine(data, target, tmp_path, capsys):
    """Issue 42: the plain report was one line with literal \\n (the whole text went through printable)."""
    folder = drafter(tmp_path, {"eagle_aux_hidden_state_layer_ids": [1, 4, 6]})
    code, out, _ = run(capsys, folder, data, "--model", target.folder)
    lines = out.splitlines()
    assert code == 1 and "\\n" not in out and len(lines) > 10
    assert lines[0].startswith("serve-check: ") and "will not capture the data's b 2, 5, 7" in lines[0]
    assert lines[1] == 'fix: config.json: "eagle_aux_hidden_state_layer_ids": [2, 5, 7]  (top level)'
    head = next(i for i, ln in enumerate(lines) if ln.startswith("verdict "))
    rows = lines[head + 1:lines.index("", head)]
    assert len(rows) == len(json.loads(run(capsys, folder, data, "--model", target.folder, "--json")[1])["engines"])
    at = lines[head].index("captures")
    assert all(r[at:at + 2] == "b " or r[at:].startswith("nothing") for r in rows), rows  # one column
    vllm_now = next(r for r in rows if " vLLM since " in r and "differs" in r)
    assert vllm_now.startswith("differs") and "b 1, 4, 6" in vllm_now


def test_bad_ids_exit_1_with_the_value_named_and_escaped_in_the_text(data, target, tmp_path, capsys):
    """Issue 42 item 9: a string id (with a newline in it) used to exit 0 ("names no ids SGLang reads").
    The text names the value, escaped on its own line, and which engines fail on it."""
    folder = drafter(tmp_path, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": ["1\nx", 4, 6]}})
    code, out, _ = run(capsys, folder, data, "--model", target.folder)
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == "serve-check: SGLang since 0.5.17, tokenspeed since PR 958 will fail on this drafter"
    error = next(ln for ln in lines if "ERROR" in ln)
    assert 'serving_bad_ids: eagle_config.eagle_aux_hidden_state_layer_ids ["1\\nx", 4, 6]' in error
    assert "SGLang since 0.5.17 fails (id \"1\\nx\": `id + 1` raises TypeError at start-up)" in error
    assert not any(ln.startswith("x") for ln in lines)  # the value's newline did not break a line
    sglang = next(ln for ln in lines if "SGLang since 0.5.17" in ln and ln.startswith("fails"))
    assert "nothing" in sglang
