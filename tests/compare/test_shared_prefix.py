"""Two prompts that share only their first N tokens (the wrong training file pinned: two chats
with the same template start), and every way a comparison can end up with nothing, or one row,
to measure: named as findings with exit 1, never a crash (issue 20, item 3)."""

from __future__ import annotations

import json

import pytest
import torch

from eagle3_tui.commands import compare as cmd
from eagle3_tui.engines.compare import compare
from tests.helpers.cli import run_command
from tests.helpers.compare_world import codes, finding, late_capture, other_prompt

SHARED = [0, 1, 2, 8]


@pytest.mark.parametrize("shifted", [False, True], ids=["same-states", "shifted-rows"])
@pytest.mark.parametrize("shared", SHARED)
def test_another_prompt_sharing_the_first_tokens_is_named(world, shared, shifted):
    r = compare(world.train(0, pad=3), late_capture(world, other_prompt(world, shared), shifted=shifted))
    json.dumps(r, allow_nan=False)  # strict JSON: no NaN slipped through
    f = finding(r, "token_divergence")
    assert f["severity"] == "error" and f["shared"] == shared
    assert f"B is another prompt that shares the first {shared} tokens" in f["message"]
    al = r["alignment"]
    if shared:
        assert (al["method"], al["offset"], al["length"], al["diverges_at"]) == ("ids", 0, shared, shared)
    else:  # one equal id further on in A is not an alignment
        assert al["offset"] == 0 and al["method"] != "ids"
    assert all(v is None or isinstance(v, float) for v in (al.get("lag_scores") or {}).values())


def test_a_single_equal_id_at_another_offset_is_not_an_alignment(world):
    """B's first id is A's sixth: before, B was 'aligned' at offset 5 on that one token."""
    r = compare(world.train(0), late_capture(world, other_prompt(world, 0), shifted=False))
    assert r["alignment"]["offset"] == 0
    assert "agree for" not in finding(r, "token_divergence")["message"]


def test_a_capture_that_starts_later_still_lines_up_by_ids(world):
    r = compare(world.train(0), world.capture(0, rows=slice(5, None)))
    assert codes(r) == set() and (r["alignment"]["method"], r["alignment"]["offset"]) == ("ids", 5)


# ------------------------------------------------------------------ nothing or one row to measure

def _all_padding(sample):
    sample.ids = torch.zeros_like(sample.ids)
    sample.loss_mask = torch.zeros_like(sample.loss_mask)
    return sample


@pytest.mark.parametrize("case, why", [
    ("b-empty", "B holds no rows"),
    ("b-empty-no-ids", "B holds no rows"),
    ("a-all-padding", "A holds no valid rows"),
    ("a-all-padding-b-no-ids", "A holds no valid rows"),
])
def test_nothing_to_compare_is_an_error_not_a_pass(world, case, why):
    a = _all_padding(world.train(0)) if case.startswith("a-all-padding") else world.train(0)
    if case.startswith("b-empty"):
        b = world.capture(0, rows=slice(0, 0), with_ids=case == "b-empty")
    else:
        b = world.capture(0, with_ids=not case.endswith("no-ids"))
    r = compare(a, b)
    json.dumps(r, allow_nan=False)
    assert r["alignment"]["length"] == 0
    f = finding(r, "nothing_compared")
    assert f["severity"] == "error" and why in f["message"]
    assert "do not line up" not in json.dumps(r["findings"])  # no talk of ids that were never tried


@pytest.mark.parametrize("with_ids", [True, False])
def test_one_row_is_measured_without_a_crash(world, with_ids):
    r = compare(world.train(0), world.capture(0, rows=slice(0, 1), with_ids=with_ids))
    assert r["alignment"]["length"] == 1 and codes(r) == set()
    m = r["slots"][0]
    assert m["tokens"] == 1 and m["norm_ratio_std"] == 0.0 and m["cos_mean"] > 0.99


def test_no_loss_rows_at_all_is_compared_as_usual(world):
    a = world.train(0)
    a.loss_mask = torch.zeros_like(a.loss_mask)
    r = compare(a, world.capture(0))
    assert codes(r) == set() and r["alignment"]["length"] == a.tokens


def test_a_divergence_at_the_first_response_token_with_no_loss_rows(world):
    """A has no loss rows: a divergence cannot be 'inside the response'; it is another prompt."""
    a = world.train(0)
    a.loss_mask = torch.zeros_like(a.loss_mask)
    f = finding(compare(a, late_capture(world, other_prompt(world, 8), shifted=True)), "token_divergence")
    assert f["in_response"] is False and f["shared"] == 8


# ------------------------------------------------------------------------------ the CLI

def _save_pair(world, tmp_path, shared: int):
    a = world.train(0, pad=3)
    torch.save({"input_ids": a.ids, "loss_mask": a.loss_mask, "hidden_state": a.final.tensor[None],
                "aux_hidden_state": torch.cat([s.tensor for s in a.slots], -1)[None]}, tmp_path / "a.ckpt")
    b = late_capture(world, other_prompt(world, shared), shifted=True)
    torch.save({"input_ids": b.ids, "aux_hidden_state": torch.cat([s.tensor for s in b.slots], -1)},
               tmp_path / "b.pt")
    return tmp_path / "a.ckpt", tmp_path / "b.pt"


def _run(argv, capsys):
    return run_command(cmd, argv, capsys)


@pytest.mark.parametrize("shared", SHARED)
def test_cli_names_another_prompt_with_exit_1(world, tmp_path, capsys, shared):
    a, b = _save_pair(world, tmp_path, shared)
    rc, out, err = _run([a, b], capsys)
    assert rc == 1 and "unexpected" not in out + err and "Traceback" not in out + err
    first = out.splitlines()[1]
    assert "ERROR" in first and "token_divergence" in first and "B is another prompt" in first
    assert f"shares the first {shared} tokens" in first
    if shared:
        assert f"{shared} rows compared" in out
    rc, out, err = _run([a, b, "--json"], capsys)
    assert rc == 1 and err == ""
    r = json.loads(out, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    assert "error" not in r
    f = finding(r, "token_divergence")
    assert (f["severity"], f["shared"]) == ("error", shared)


def test_cli_on_the_demo_pair_from_the_issue(demo, capsys):
    """The demo's own files: sample 0 and a capture of sample 17 share the template's start."""
    root, _ = demo
    rc, out, err = _run([root / "train/rows_0-2000/data_0.ckpt", root / "infer/fault_shifted_s17.pt"], capsys)
    assert rc == 1 and "unexpected" not in err
    assert "token_divergence" in out.splitlines()[1] and "B is another prompt that shares the first" in out


def test_cli_says_nothing_was_compared(world, tmp_path, capsys):
    a = _all_padding(world.train(0))
    torch.save({"input_ids": a.ids, "loss_mask": a.loss_mask,
                "aux_hidden_state": torch.cat([s.tensor for s in a.slots], -1)[None]}, tmp_path / "a.ckpt")
    b = world.capture(0)
    torch.save({"input_ids": b.ids, "aux_hidden_state": torch.cat([s.tensor for s in b.slots], -1)},
               tmp_path / "b.pt")
    rc, out, _ = _run([tmp_path / "a.ckpt", tmp_path / "b.pt"], capsys)
    assert rc == 1 and "nothing_compared" in out.splitlines()[1] and "FINDINGS: none" not in out
