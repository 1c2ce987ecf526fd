"""Issue 24: in a real 80x24 terminal (tmux), every column of the sample's token table and of the
compare view is reached by keyboard alone (tab, ←/→; t, h, k, l, /, c), on the demo read with
its tokenizer (the text columns make the rows widest)."""

from __future__ import annotations

import os

import pytest

from tests.helpers.tmux import Tmux, app_argv

TOKEN_COLUMNS = ["#", "id", "text", "loss", "aux0", "aux1", "aux2", "final"]
COMPARE_COLUMNS = ["row", "A id", "B id", "A text", "B text", "‖A0‖", "‖B0‖", "cos0", "‖A1‖", "‖B1‖", "cos1",
                   "‖A2‖", "‖B2‖", "cos2", "‖Af‖", "‖Bf‖", "cosf"]


def _is_token_head(line: str) -> bool:
    return line.split("││")[-1].lstrip("│ ").startswith("# ")


def _heads(term: Tmux, marker, presses: int, done) -> str:
    """The header lines `marker` picks, on the screen now and after each of up to `presses` →,
    until `done(lines)` holds (every column seen). Each → is waited for until the screen
    changes: while a column is still unseen the last one is not in view, so → moves the table
    (no guess at how long a → that changes nothing takes on a loaded machine)."""
    seen: list[str] = []
    for i in range(presses + 1):
        if i:
            before = term.screen()
            term.keys("Right")
            term.wait_for(lambda s, b=before: s != b, what="→ moving the columns")
        seen += [line for line in term.screen().splitlines() if marker(line)]
        if done("\n".join(seen)):
            break
    return "\n".join(seen)


@pytest.fixture
def terminal(demo, tmp_path):
    env = {"PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    term = Tmux(app_argv(str(demo / "train/rows_0-2000/data_0.ckpt"), "--tokenizer", str(demo / "model"),
                         "--data-dir", str(tmp_path)), 80, 24, env)
    yield term
    term.kill()


def test_every_column_is_reached_by_keyboard_at_80x24(terminal, demo):
    term = terminal
    term.wait_for(lambda s: "token 0/151" in s, what="data_0 on screen")
    term.keys("Tab")
    # the text column comes with the tokenizer, which loads after the sample: on a loaded machine
    # the table can be on screen without it, and → would then scroll past where it appears
    term.wait_for(lambda s: any(_is_token_head(x) and " text " in x for x in s.splitlines()),
                  what="the token table with its text column")
    first = "\n".join(line for line in term.screen().splitlines() if _is_token_head(line))
    assert "final" not in first  # at 80x24 the last columns start off screen
    seen = _heads(term, _is_token_head, 8, lambda lines: all(f" {c} " in lines + " " for c in TOKEN_COLUMNS))
    for column in TOKEN_COLUMNS:
        assert f" {column} " in seen + " ", (column, seen)

    # compare: pin data_0 (A), up to the demo, into infer/, filter to ok_bf16, c
    term.keys("Tab")
    term.keys("t")
    term.wait_for(lambda s: "A data_0.ckpt" in s, what="the pin")
    for key, shown in (("h", "rows_0-2000/"), ("h", "infer/"), ("k", None), ("k", None), ("l", "fault_")):
        before = term.screen()
        term.keys(key)
        term.wait_for(lambda s, x=shown, b=before: (x in s) if x else s != b, what=shown or key)
    term.keys("/")
    term.keys("ok_bf16", literal=True)
    term.keys("Enter")
    term.wait_for(lambda s: "1 of 17 entries match /ok_bf16" in s, what="the filter")
    # enter hands the focus back to the list: the footer shows the list's keys again
    term.wait_for(lambda s: "l Open" in s, what="the list's keys in the footer")
    term.keys("c")
    term.wait_for(lambda s: "aligned tokens" in s and "row " in s, what="the compare view")
    seen = _heads(term, lambda line: "‖A" in line, 6, lambda lines: all(c in lines for c in COMPARE_COLUMNS))
    for column in COMPARE_COLUMNS:
        assert column in seen, (column, seen)
