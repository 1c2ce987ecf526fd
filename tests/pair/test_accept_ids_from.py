"""`accept --ids-from SAMPLE`: a capture without token ids borrows its training sample's, aligned
by the hidden states as compare aligns them (docs/accept.md: `--order` on the demo's permuted capture)."""

from __future__ import annotations

import json

from eagle3_tui.cli import main

SHARD = "train/rows_0-2000"


def accept(capsys, *args: str) -> tuple[int, dict, str]:
    rc = main(["accept", *args, "--json"])
    captured = capsys.readouterr()
    return rc, json.loads(captured.out.strip().splitlines()[-1]) if captured.out.strip() else {}, captured.err


def test_the_permuted_capture_scores_with_borrowed_ids_and_order_restores_it(demo, capsys):
    drafter, train = str(demo / "drafter"), str(demo / SHARD / "data_10.ckpt")
    capture = str(demo / "infer/fault_permuted_s10.pt")
    rc, without, _ = accept(capsys, capture, "--drafter", drafter)
    assert rc == 2 and "no token ids" in without["error"]
    rc, a, _ = accept(capsys, train, "--drafter", drafter)
    assert rc == 0
    rc, b, _ = accept(capsys, capture, "--drafter", drafter, "--ids-from", train)
    assert rc == 0, b
    assert b["ids_from"] == train and any("borrowed from" in n for n in b["notes"])
    assert b["rows"] == a["rows"]  # the same loss rows (the mask is borrowed too)
    rc, fixed, _ = accept(capsys, capture, "--drafter", drafter, "--ids-from", train, "--order", "1,2,0")
    assert rc == 0 and fixed["top1"] > 2 * b["top1"]
    assert abs(fixed["top1"] - a["top1"]) < 0.05  # the bf16 capture, in A's order: A's figure back


def test_ids_from_an_unrelated_or_id_less_sample_is_one_line(demo, capsys):
    drafter, capture = str(demo / "drafter"), str(demo / "infer/fault_permuted_s10.pt")
    rc, r, _ = accept(capsys, capture, "--drafter", drafter, "--ids-from", str(demo / SHARD / "data_5.ckpt"))
    assert rc == 2 and "do not line up" in r["error"]
    rc, r, _ = accept(capsys, capture, "--drafter", drafter, "--ids-from", str(demo / "infer/ok_noids_s2.pt"))
    assert rc == 2 and "nor has" in r["error"]
    # a sample with ids of its own keeps them
    rc, r, _ = accept(capsys, str(demo / SHARD / "data_0.ckpt"), "--drafter", drafter, "--ids-from",
                      str(demo / SHARD / "data_10.ckpt"))
    assert rc == 0 and any("not used" in n for n in r["notes"])
