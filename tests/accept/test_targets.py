"""Every acceptance figure names what it was scored against: the target model's next token (with
--model and a post-norm final state) or the data's next ids; with the model's targets the same
drafts are scored against the ids too, and the compare view says why B's figure is not A's."""

from __future__ import annotations

import os
import sys

from eagle3_tui.engines.model.accept import accept_file
from eagle3_tui.engines.model.accept_words import why_b_differs
from tests.helpers import warm_cli


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def test_model_targets_carry_the_ids_figures_of_the_same_drafts(trained):
    sample, drafter, model = str(trained.data / "train_0.ckpt"), str(trained.drafter), str(trained.model)
    by_model = accept_file(sample, drafter, model=model)
    by_ids = accept_file(sample, drafter)
    assert by_model["target_source"] == "model" and by_ids["target_source"] == "ids"
    assert "against_ids" not in by_ids
    # the second figure is exactly what `accept` without --model says: one file, one number per kind
    assert by_model["against_ids"] == {"top1": by_ids["top1"], "steps": by_ids["steps"], "tau": by_ids["tau"],
                                       "rows": by_ids["rows"]}
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    out = warm_cli.run([sys.executable, "-m", "eagle3_tui", "accept", sample, "--drafter", drafter,
                        "--model", model], text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "  targets the target model's next token (its head on the sample's final state)" in lines
    assert any(line.startswith(f"  top-1 {_pct(by_model['top1'])} over {by_model['rows']} rows") for line in lines)
    assert any(line.startswith(f"  the same drafts against the data's next token ids: top-1 {_pct(by_ids['top1'])}")
               for line in lines)


def test_why_b_differs_names_other_targets_and_other_rows(trained):
    drafter, model = str(trained.drafter), str(trained.model)
    a = accept_file(str(trained.data / "train_0.ckpt"), drafter, model=model)
    # the capture holds the same states, without a loss mask or a final state: scored on its ids, every row
    b = accept_file(str(trained.data / "ok_bf16_0.pt"), drafter, model=model)
    assert b["target_source"] == "ids" and b["rows_from"] == "all rows"
    why = why_b_differs(a, b)
    assert len(why) == 2, why
    assert why[0].startswith("other targets: A vs model's token, B vs data's ids (A vs data's ids: "
                             f"{_pct(a['against_ids']['top1'])})")
    assert why[1] == f"other rows: A loss mask ({a['rows']}), B all rows ({b['rows']})"
    assert why_b_differs(a, a) == []
    assert why_b_differs(a, {"error": "no ids"}) == []
