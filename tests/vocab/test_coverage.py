"""Draft-vocabulary coverage: per sample, over a scanned dataset, and the mapping file itself."""

from __future__ import annotations

import json
import sys

import pytest
import torch

from eagle3_tui.dataset.findings import dataset_findings
from eagle3_tui.engines.model.vocab import VocabError, annotate_summary, find_mapping, load_mapping
from eagle3_tui.engines.read.stats import summarize_file
from eagle3_tui.engines.read.tokens import annotate
from eagle3_tui.engines.scan.records import scan_tree
from tests.helpers import warm_cli
from tests.helpers.vocab import hand_count, write_mapping


def test_scan_finds_the_mapping_in_the_tree_and_counts_like_a_hand_count(dataset, chat_samples, draft_ids):
    records = list(scan_tree(str(dataset), workers=1))
    samples = [r for r in records if "error" not in r]
    assert len(samples) == len(chat_samples)
    found = {f["code"]: f for f in dataset_findings(records)}["draft_vocab_coverage"]
    n_in, n_out = hand_count(chat_samples, draft_ids)
    assert (found["in_vocab"], found["out_of_vocab"]) == (n_in, n_out)
    assert found["coverage"] == pytest.approx(n_in / (n_in + n_out))
    assert found["severity"] == "warning"  # about half of the answers: far below 90%
    # the mapping file itself is no unreadable sample
    assert not any(f["code"] == "unreadable" for f in dataset_findings(records))


def test_without_a_mapping_there_is_no_finding_and_a_full_vocabulary_is_info(dataset, tmp_path, hf_tokenizer):
    (dataset / "vocab_mapping" / "vocab_mapping.pt").unlink()
    records = list(scan_tree(str(dataset), workers=1))
    assert all("draft_vocab" not in r for r in records)
    assert "draft_vocab_coverage" not in {f["code"] for f in dataset_findings(records)}
    full = tmp_path / "full.pt"
    write_mapping(full, list(range(hf_tokenizer.get_vocab_size())), hf_tokenizer.get_vocab_size())
    records = list(scan_tree(str(dataset), workers=2, vocab_mapping=str(full)))
    found = {f["code"]: f for f in dataset_findings(records)}["draft_vocab_coverage"]
    assert found["coverage"] == 1.0 and found["severity"] == "info"


def test_per_sample_share_and_oov_tokens_as_text(dataset, chat_samples, draft_ids, tokenizer_dir):
    path, ids, mask = chat_samples[2]
    keep = set(draft_ids)
    summary = annotate(summarize_file(str(path)), str(tokenizer_dir))
    summary = annotate_summary(summary, str(dataset / "vocab_mapping" / "vocab_mapping.pt"))
    v = summary["vocab"]
    loss = [(t, i) for t, (i, m) in enumerate(zip(ids, mask)) if m]
    outside = [(t, i) for t, i in loss if i not in keep]
    assert outside, "the fixture leaves part of every answer outside"
    assert (v["in"], v["out"]) == (len(loss) - len(outside), len(outside))
    assert [(o["index"], o["id"]) for o in v["oov"]] == outside
    assert [o["text"] for o in v["oov"]] == [summary["text"][t] for t, _ in outside]


def test_the_mapping_file_summarises_as_a_draft_vocabulary(dataset, draft_ids, hf_tokenizer):
    s = summarize_file(str(dataset / "vocab_mapping" / "vocab_mapping.pt"))
    assert s["not_sample"]
    vm = s["vocab_mapping"]
    assert (vm["draft"], vm["target"]) == (len(draft_ids), hf_tokenizer.get_vocab_size())
    assert vm["first_ids"] == draft_ids[:16]


def test_found_by_walking_up_from_a_shard_folder(dataset):
    assert find_mapping(str(dataset / "rows_0-2000")) == str(dataset / "vocab_mapping" / "vocab_mapping.pt")
    assert find_mapping(str(dataset / "vocab_mapping")) is not None
    (dataset / "vocab_mapping" / "vocab_mapping.pt").unlink()
    assert find_mapping(str(dataset / "rows_0-2000"), levels=1) is None


def test_an_inconsistent_mapping_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "vocab_mapping.pt"
    t2d = torch.zeros(10, dtype=torch.bool)
    t2d[[1, 2]] = True
    torch.save({"d2t": torch.tensor([0, 5]), "t2d": t2d}, bad)  # draft 1 -> target 6, unmarked
    with pytest.raises(VocabError, match="d2t points at target ids"):
        load_mapping(str(bad))
    torch.save({"weights": torch.zeros(3)}, bad)
    with pytest.raises(VocabError, match="no d2t and t2d"):
        load_mapping(str(bad))


def test_scan_cli_takes_vocab_mapping(dataset, tmp_path, hf_tokenizer):
    other = tmp_path / "elsewhere.pt"
    write_mapping(other, [0, 1, 2], hf_tokenizer.get_vocab_size())
    (dataset / "vocab_mapping" / "vocab_mapping.pt").unlink()
    run = warm_cli.run([sys.executable, "-m", "eagle3_tui", "scan", str(dataset), "--json", "--no-cache",
                        "--workers", "1", "--vocab-mapping", str(other)], capture_output=True, text=True, timeout=180)
    last = json.loads(run.stdout.strip().splitlines()[-1])
    found = {f["code"]: f for f in last["findings"]}["draft_vocab_coverage"]
    assert found["coverage"] < 0.1 and run.returncode == 1
    run = warm_cli.run([sys.executable, "-m", "eagle3_tui", "scan", str(dataset), "--vocab-mapping",
                        str(tmp_path / "missing.pt")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "missing.pt" in run.stderr and "Traceback" not in run.stderr
