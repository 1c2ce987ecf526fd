"""`eagle3-tui pair CAPTURE DATASET`: every capture the demo writes pairs with the training sample
its README names, by ids when it has them, else by hidden states; a second pairing reads nothing."""

from __future__ import annotations

import json

import pytest

from eagle3_tui.cli import main
from tests.helpers.pair import dataset_of, demo_pairs


def pair(capsys, *args: str) -> tuple[int, dict]:
    rc = main(["pair", *args, "--json"])
    out = capsys.readouterr().out
    return rc, json.loads(out.strip().splitlines()[-1])


def test_the_readme_table_lists_every_capture(demo):
    pairs = demo_pairs(demo)
    assert len(pairs) == len(list((demo / "infer").iterdir())) >= 15
    assert sum(not ids for _, _, ids in pairs) >= 4  # the id-less ones are paired by their states


def test_pair_names_the_training_sample_of_every_demo_capture(demo, capsys):
    for capture, sample, has_ids in demo_pairs(demo):
        folder, inside = dataset_of(sample)
        rc, result = pair(capsys, str(demo / capture), str(demo / folder))
        assert rc == 0, (capture, result)
        best = result["matches"][0]
        assert best["path"] == inside, (capture, result["matches"][:3])
        assert best["how"] == ("ids" if has_ids else "states"), capture
        assert set(best) >= {"path", "shared_tokens", "how", "score"}
        assert best["shared_tokens"] > 0
        # ranked: the training sample ahead of the rest by a clear margin
        assert all(m["score"] < best["score"] - 0.05 for m in result["matches"][1:]), (capture, result["matches"])


def test_shared_tokens_say_how_much_of_the_prompt_is_shared(demo, capsys):
    train = str(demo / "train")
    _, exact = pair(capsys, str(demo / "infer/ok_bf16_s0.pt"), train)
    assert exact["matches"][0]["relation"] == "exact"
    assert exact["matches"][0]["shared_tokens"] == exact["capture_tokens"]
    # the template adds a newline at position 15: 15 tokens shared, yet the sample still ranks first
    _, drift = pair(capsys, str(demo / "infer/fault_template_drift_s16.pt"), train)
    assert drift["matches"][0]["shared_tokens"] == 15 and drift["matches"][0]["relation"] == "head"
    # the prompt (28 tokens) and some greedily decoded ones
    _, prefix = pair(capsys, str(demo / "infer/ok_prefix_s1.pt"), train)
    assert 28 <= prefix["matches"][0]["shared_tokens"] < prefix["capture_tokens"]
    # an id-less capture: every row of the prompt-only capture agrees with the sample's
    _, states = pair(capsys, str(demo / "infer/ok_list_s4.pt"), train)
    assert states["matches"][0]["shared_tokens"] == states["capture_tokens"]


def test_a_second_pairing_reads_no_sample(demo, capsys):
    capture, train = str(demo / "infer/fault_permuted_s10.pt"), str(demo / "train")
    _, first = pair(capsys, capture, train)
    assert first["files"] == 24 and first["files_read"] == 24 and first["bytes_read"] > 0
    _, second = pair(capsys, capture, train)
    assert second["files_read"] == 0 and second["bytes_read"] == 0
    assert second["matches"] == first["matches"]
    # another capture on the same dataset: still nothing read
    _, other = pair(capsys, str(demo / "infer/ok_bf16_s0.pt"), train)
    assert other["files_read"] == 0 and other["matches"][0]["path"] == "rows_0-2000/data_0.ckpt"


def test_a_capture_inside_the_dataset_does_not_pair_with_itself(demo, capsys):
    rc, result = pair(capsys, str(demo / "infer/ok_bf16_s0.pt"), str(demo))
    assert rc == 0
    paths = [m["path"] for m in result["matches"]]
    assert "infer/ok_bf16_s0.pt" not in paths
    assert paths[0] in ("train/rows_0-2000/data_0.ckpt", "train_pt/rows_0-2000/data_0.pt")


def test_text_output_and_bad_inputs(demo, capsys):
    rc = main(["pair", str(demo / "infer/ok_noids_s2.pt"), str(demo / "train")])
    out = capsys.readouterr().out
    assert rc == 0 and "paired by hidden states" in out and "1. rows_0-2000/data_2.ckpt" in out
    rc = main(["pair", str(demo / "infer/nope.pt"), str(demo / "train")])
    assert rc == 2 and "no such file" in capsys.readouterr().err
    rc = main(["pair", str(demo / "infer/ok_noids_s2.pt"), str(demo / "nowhere")])
    assert rc == 2 and "nowhere" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["pair", str(demo / "infer/ok_noids_s2.pt")])


def test_a_plain_scan_computes_no_pairing_print_and_pair_reads_each_file_once(demo, capsys):
    """The ~3 KB a record keeps for pairing is computed only when `pair` asks: `scan --json`
    lines never carry it; the first `pair` after a scan reads each file once for it, the next
    pairing nothing, and a scan after that reads nothing either (and still prints no print)."""
    train = str(demo / "train")

    def scanned() -> list[dict]:
        assert main(["scan", train, "--json"]) == 0
        lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        records = [r for r in lines if "path" in r]
        assert len(records) == 24 and not [r["path"] for r in records if "pair" in r]
        return records

    assert not [r for r in scanned() if r.get("cached")]
    sample = next(s for c, s, _ in demo_pairs(demo) if c.endswith("fault_permuted_s10.pt"))
    capture = str(demo / "infer/fault_permuted_s10.pt")
    _, first = pair(capsys, capture, train)
    assert first["files_read"] == 24 and first["matches"][0]["path"] == dataset_of(sample)[1]
    _, second = pair(capsys, capture, train)
    assert second["files_read"] == 0 and second["matches"] == first["matches"]
    assert all(r.get("cached") for r in scanned())
