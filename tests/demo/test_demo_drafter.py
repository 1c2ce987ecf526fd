"""The demo's drafter: trained on the demo's training samples, it agrees with them far above
chance, keeps that on a correctly wired capture, and loses it on a mis-wired one."""

from __future__ import annotations

import pytest

from eagle3_tui.engines.model.accept import accept_file
from tests.helpers.demo_world import demo_once


@pytest.fixture(scope="module")
def demo_with_drafter(tmp_path_factory, untouched):
    root, manifest = demo_once(tmp_path_factory, untouched, drafter=True)
    assert manifest["drafter"] == "drafter"
    return root, manifest


def test_the_demo_drafter_separates_correct_from_miswired_captures(demo_with_drafter):
    root, manifest = demo_with_drafter
    drafter = str(root / manifest["drafter"])
    by_file = {c["file"]: c for c in manifest["infer"]}

    def top1(rel: str) -> float:
        # every valid row: a capture has no loss mask, so both sides are scored on the same rows
        r = accept_file(str(root / rel), drafter, all_rows=True)
        assert "error" not in r, r
        return r["top1"]

    ok = "infer/ok_bf16_s0.pt"
    trained = accept_file(str(root / by_file[ok]["train"]), drafter)
    assert trained["top1"] > 0.5 and trained["tau"] > 1.8  # draft vocab 256 of 1000: chance is far below
    assert abs(top1(ok) - top1(by_file[ok]["train"])) < 0.05  # bf16 engine, same wiring: same agreement
    for fault, below in (("fault_other_request", 0.1), ("fault_shifted", 0.1), ("fault_nan", 0.1)):
        rel = next(f for f in by_file if f.startswith(f"infer/{fault}"))
        assert top1(rel) < below, rel
    scaled = next(f for f in by_file if f.startswith("infer/fault_scale"))
    assert top1(scaled) < top1(by_file[scaled]["train"]) - 0.1


def test_the_demo_command_opens_the_tui_with_the_drafter(demo_with_drafter):
    from eagle3_tui.commands.demo import tui_argv
    from eagle3_tui.commands.tui import build_parser

    root, manifest = demo_with_drafter
    args = build_parser().parse_args(tui_argv(manifest))
    assert args.drafter == str(root / "drafter") and args.tokenizer == str(root / "model")


def test_the_third_draft_step_tells_a_correct_capture_from_a_faulty_one(demo_with_drafter):
    """`accept` drafts 3 tokens; the drafter is trained on 3 TTT steps, each fed its own output, so
    step 3 holds on a correctly wired capture and falls on a faulty one, as step 1 does (trained on
    two steps it scored 0-7% at step 3 on every file alike)."""
    root, manifest = demo_with_drafter
    drafter = str(root / manifest["drafter"])
    by_file = {c["file"]: c for c in manifest["infer"]}

    def step3(rel: str, ids_from: str | None = None) -> float:
        r = accept_file(str(root / rel), drafter, all_rows=True,
                        ids_from=str(root / ids_from) if ids_from else None)
        assert "error" not in r, r
        return r["steps"][2]

    ok = "infer/ok_bf16_s0.pt"
    assert step3(ok) > 0.35 and abs(step3(ok) - step3(by_file[ok]["train"])) < 0.05
    for fault, borrow in (("fault_permuted", True), ("fault_scale", False), ("fault_layers_all", True)):
        rel = next(f for f in by_file if f.startswith(f"infer/{fault}"))
        train = by_file[rel]["train"]
        assert step3(rel, train if borrow else None) < step3(train) - 0.1, rel
