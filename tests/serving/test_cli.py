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
    flat = " ".join(out.split())
    assert ("vLLM 0.22.0 ≤ v, V2 runner will capture b 1, 4, 6; the data holds b 2, 5, 7: every slot 1 boundary "
            "shallower") in flat
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
    block = lines[head + 1:lines.index("", head)]
    rows = [ln for ln in block if not ln.startswith(" ")]  # a row's reason wraps in its own column
    assert len(rows) == len(json.loads(run(capsys, folder, data, "--model", target.folder, "--json")[1])["engines"])
    at = lines[head].index("captures")
    why = lines[head].index("why")
    assert all(r[at:at + 2] == "b " or r[at:].startswith("nothing") for r in rows), rows  # one column
    assert all(ln[:why].strip() == "" for ln in block if ln.startswith(" ")), block  # under the why column
    vllm_now = next(r for r in rows if " vLLM 0.22.0 ≤ v, V2 runner " in r)
    assert vllm_now.startswith("differs") and "b 1, 4, 6" in vllm_now
    assert max(map(len, lines)) <= 100  # issue 56: the why column wraps (it printed 474-character lines)


def test_bad_ids_exit_1_with_the_value_named_and_escaped_in_the_text(data, target, tmp_path, capsys):
    """Issue 42 item 9: a string id (with a newline in it) used to exit 0 ("names no ids SGLang reads").
    The text names the value, escaped on its own line, and which engines fail on it."""
    folder = drafter(tmp_path, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": ["1\nx", 4, 6]}})
    code, out, _ = run(capsys, folder, data, "--model", target.folder)
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == "serve-check: SGLang 0.4.9 ≤ v, tokenspeed 0.1.1 ≤ v will fail on this drafter"
    first = next(i for i, ln in enumerate(lines) if "ERROR" in ln)
    error = " ".join([lines[first]] + [ln.strip() for ln in lines[first + 1:] if ln.startswith("          ")][:6])
    assert 'serving_bad_ids: eagle_config.eagle_aux_hidden_state_layer_ids ["1\\nx", 4, 6]' in error
    assert "SGLang 0.4.9 ≤ v fails at start-up (id \"1\\nx\": `id + 1` raises TypeError)" in error
    assert not any(ln.startswith("x") for ln in lines)  # the value's newline did not break a line
    sglang = next(ln for ln in lines if "SGLang 0.4.9 ≤ v " in ln and ln.startswith("fails"))
    assert "nothing" in sglang and "fails at start-up:" in sglang


def test_engine_shows_the_release_asked_and_says_a_later_one_is_not_read(data, target, tmp_path, capsys):
    """Issue 56: the version served with was never asked, and nothing said which release was the
    newest read ("since 0.34.0" covered releases nobody read)."""
    folder = drafter(tmp_path, {"eagle_aux_hidden_state_layer_ids": [2, 5, 7], "eagle_config": {
        "eagle_aux_hidden_state_layer_ids": [1, 4, 6]}})
    code, out, _ = run(capsys, folder, data, "--model", target.folder, "--engine", "vllm==0.33.0", "--json")
    result = json.loads(out.splitlines()[-1])
    assert code == 0 and result["asked"] == {"vllm": "0.33.0"}
    assert [(e["engine"], e["variant"], e["asked"]) for e in result["engines"]] == [
        ("vllm", "V1 runner", "0.33.0"), ("vllm", "V2 runner", "0.33.0")]
    assert result["read"]["vllm"]["newest"] == "0.34.0" and result["read"]["sglang"]["newest"] == "0.5.23"
    code, out, _ = run(capsys, folder, data, "--model", target.folder, "--engine", "vllm==0.35.0",
                       "--engine", "sglang==0.5.23")
    assert code == 0 and "every engine asked captures the data's b 2, 5, 7; nothing to fix" in out.splitlines()[0]
    assert "asked:   vLLM 0.35.0: not read, the rules of 0.34.0 assumed (the newest read); SGLang 0.5.23" in out
    assert "read:    vLLM 0.10.2 to 0.34.0, SGLang 0.4.8 to 0.5.23, tokenspeed 0.1.0 to 0.1.1" in out
    assert "tokenspeed 0.1" not in out.split("verdict ")[1] and "fix:" not in out


def test_engine_that_is_not_a_release_exits_2(data, target, tmp_path, capsys):
    folder = drafter(tmp_path, {"eagle_aux_hidden_state_layer_ids": [2, 5, 7]})
    code, _, err = run(capsys, folder, data, "--model", target.folder, "--engine", "vllm=0.33")
    assert code == 2 and "serve-check: --engine 'vllm=0.33'" in err
    code, _, err = run(capsys, folder, data, "--model", target.folder, "--engine", "vllm==0.33.0rc1")
    assert code == 2 and "not a release number" in err


def test_a_guess_that_matches_is_said_in_the_verdict_the_fix_pins_it(data, target, tmp_path, capsys):
    """The demo's drafter: the verdict said "every current engine captures b 2, 5, 7" above two fix
    lines and a serving_guessed warning."""
    folder = drafter(tmp_path, {"eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 4, 6]}})
    code, out, _ = run(capsys, folder, data, "--model", target.folder)
    head = " ".join(out.split("\n\n")[0].split())
    assert code == 0 and "but vLLM 0.22.0 ≤ v, V2 runner only by its default" in head
    assert 'fix: config.json: "eagle_aux_hidden_state_layer_ids": [2, 5, 7] (top level)' in head
    # the second fix line is TensorRT-LLM's own option: the verdict says why it is there too
    assert "the fixes below pin it (TensorRT-LLM by its own option)" in head
    assert "fix: TensorRT-LLM (LLM API options): speculative_config.eagle3_layers_to_capture: [1, 4, 6]" in head


def test_an_engine_that_cannot_run_live_says_so_and_the_table_still_answers(data, target, tmp_path, capsys):
    """SGLang has no build that runs on a CPU here: --live sglang says so in one line under the
    table, which still gives every engine's rows (and the JSON carries the reason)."""
    folder = drafter(tmp_path, {"eagle_aux_hidden_state_layer_ids": [2, 5, 7]})
    code, out, _ = run(capsys, folder, data, "--model", target.folder, "--live", "sglang")
    assert "live: SGLang could not be run: sglang is not available live" in out
    assert "SGLang" in out.split("live:")[0]  # the table's rows are there
    assert code == 1 and all(len(line) <= 100 for line in out.splitlines())
    code, out, _ = run(capsys, folder, data, "--model", target.folder, "--live", "sglang", "--json")
    live = json.loads(out.splitlines()[-1])["live"]
    assert live["engine"] == "sglang" and "not available live" in live["error"]
