"""`compare --tokenizer` that cannot decode says so in one line in text mode too (issue 21,
item 8), as `summary` does; the numbers and the exit status stand."""

from __future__ import annotations

import pytest

from eagle3_tui.commands import compare as cmd
from tests.helpers.cli import run_command


def _run(argv, capsys):
    return run_command(cmd, argv, capsys)


@pytest.mark.parametrize("broken, said", [
    ("truncated", "not a tokenizers tokenizer.json"),
    ("missing", "no such tokenizer file or model folder"),
    ("other-host", "is on another machine than the data"),
])
def test_a_broken_tokenizer_is_one_line_in_text_mode(demo, tmp_path, capsys, broken, said):
    root, _ = demo
    if broken == "truncated":
        (tmp_path / "tok").mkdir()
        (tmp_path / "tok" / "tokenizer.json").write_text('{"model": ')
        tok = tmp_path / "tok"
    else:
        tok = tmp_path / "nowhere" if broken == "missing" else "other-box:/models/x"
    a, b = root / "train/rows_0-2000/data_0.ckpt", root / "infer/ok_bf16_s0.pt"
    rc, out, err = _run([a, b, "--tokenizer", tok], capsys)
    lines = [line for line in (out + err).splitlines() if said in line]
    assert len(lines) == 1 and lines[0].startswith("token text: not shown: ")
    assert rc == 0 and out.startswith("FINDINGS: none") and "Traceback" not in out + err


def test_a_good_tokenizer_adds_no_such_line(demo, capsys):
    root, _ = demo
    rc, out, _ = _run([root / "train/rows_0-2000/data_0.ckpt", root / "infer/ok_bf16_s0.pt",
                       "--tokenizer", root / "model"], capsys)
    assert rc == 0 and "token text" not in out
