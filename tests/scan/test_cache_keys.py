"""The record and findings caches answer only for what they were computed with: the root being
scanned (paths), every option that changes a record or a finding, and the code (issue 21.2, 21.3)."""

from __future__ import annotations

import os

import pytest

from eagle3_tui.cli import main
from eagle3_tui.dataset.cache import ScanCache, mode_name
from eagle3_tui.demo.model import build_model
from eagle3_tui.engines.scan.options import ScanOptions
from tests.helpers import warm_cli
from tests.helpers.vocab import write_mapping
from tests.scan.test_engine import copy_dataset, scan_json


def strip(records):
    return sorted(({k: v for k, v in r.items() if k not in ("cached", "computed")} for r in records),
                  key=lambda r: r["path"])


def coverage(last) -> float | None:
    found = [f for f in last["findings"] if f["code"] == "draft_vocab_coverage"]
    return found[0]["coverage"] if found else None


def test_shard_then_parent_then_shard_each_reports_paths_under_its_own_root(clean, tmp_path, capsys):
    root = copy_dataset(clean, tmp_path / "ds")
    shard = root / "rows_0-12"
    names = sorted(p.name for p in shard.glob("*.ckpt"))

    first, _ = scan_json(capsys, shard)
    assert sorted(r["path"] for r in first) == names and {r["shard"] for r in first} == {""}

    parent, last = scan_json(capsys, root)
    assert last["summary"]["cached"] == len(names)  # the shard's records served the parent's scan
    for r in parent:
        assert (root / r["path"]).is_file(), r["path"]
        assert r["shard"] == r["path"].rsplit("/", 1)[0]
    fresh, fresh_last = scan_json(capsys, root, "--no-cache")
    assert strip(parent) == strip(fresh)
    assert last["findings"] == fresh_last["findings"]
    assert main(["scan", str(root)]) in (0, 1)
    rows = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in rows if line.startswith("rows_")] == ["rows_0-12", "rows_12-24", "rows_24-36"]
    assert not [line for line in rows if line.startswith(". ")], "a shard named '.' (paths of another root)"

    again, last = scan_json(capsys, shard)
    assert last["summary"]["cached"] == len(names)
    assert sorted(r["path"] for r in again) == names and {r["shard"] for r in again} == {""}


def test_each_option_toggled_gives_what_a_scan_without_the_cache_gives(clean, tmp_path, capsys):
    root = copy_dataset(clean, tmp_path / "ds")
    vocab = build_model(seed=0).cfg.vocab
    every, few = tmp_path / "every.pt", tmp_path / "few.pt"
    write_mapping(every, list(range(vocab)), vocab)
    write_mapping(few, list(range(10)), vocab)
    seen = {}
    for extra in [(), ("--vocab-mapping", every), ("--vocab-mapping", few), (), ("--rows", "8"),
                  ("--vocab-mapping", few, "--rows", "8"), ("--full",), ("--budget", "64K"),
                  ("--full", "--budget", "64K"), ("--vocab-mapping", every)]:
        records, last = scan_json(capsys, root, "--workers", "1", *extra)
        fresh, fresh_last = scan_json(capsys, root, "--workers", "1", "--no-cache", *extra)
        assert strip(records) == strip(fresh), extra
        assert last["findings"] == fresh_last["findings"], extra
        seen[extra] = coverage(last)
    assert seen[()] is None
    assert seen[("--vocab-mapping", every)] == 1.0
    assert seen[("--vocab-mapping", few)] < 0.1


def test_a_mapping_rewritten_in_the_tree_is_counted_again(clean, tmp_path, capsys):
    root = copy_dataset(clean, tmp_path / "ds")
    vocab = build_model(seed=0).cfg.vocab
    mapping = root / "vocab_mapping" / "vocab_mapping.pt"
    write_mapping(mapping, list(range(vocab)), vocab)
    _, first = scan_json(capsys, root, "--workers", "1")
    assert coverage(first) == 1.0
    write_mapping(mapping, list(range(10)), vocab)  # the demo's mapping, then a 10-token one
    _, second = scan_json(capsys, root, "--workers", "1")
    _, fresh = scan_json(capsys, root, "--workers", "1", "--no-cache")
    assert coverage(second) == coverage(fresh) < 0.1


def test_the_findings_key_holds_every_option_that_changes_a_record_or_a_finding(clean, capsys):
    records, _ = scan_json(capsys, clean, "--workers", "1")
    base = ScanCache.digest(records, ScanOptions())
    for change in ({"full": True}, {"rows": 8}, {"budget": 65536}, {"drafter": "/d"}, {"drafter": "/d", "model": "/m"},
                   {"vocab_mapping": "/v.pt"}):
        assert ScanCache.digest(records, ScanOptions(**change)) != base, change
    for change in ({"workers": 3}, {"use_cache": False}):  # how, not what, is scanned
        assert ScanCache.digest(records, ScanOptions(**change)) == base, change
    # the code version is part of both keys
    assert mode_name(False, 64).startswith("quick64b524288@") and mode_name(True, 8, 65536).startswith("full8b65536@")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_gets_a_record_with_the_reason_and_is_never_opened(clean, tmp_path, capsys):
    import json
    import sys

    root = copy_dataset(clean, tmp_path / "ds")
    os.mkfifo(root / "rows_0-12" / "data_99.ckpt")
    os.mkfifo(root / "control")
    # a separate process with a timeout: opening a FIFO would block it, not this test run
    run = warm_cli.run([sys.executable, "-m", "eagle3_tui", "scan", str(root), "--json", "--no-cache"],
                       capture_output=True, text=True, timeout=300)
    lines = [json.loads(x) for x in run.stdout.splitlines()]
    by_path = {r["path"]: r for r in lines[:-1]}
    fifo = by_path["rows_0-12/data_99.ckpt"]
    assert fifo["error"] == "a FIFO (named pipe), not a regular file: not opened" and "not_sample" not in fifo
    other = by_path["control"]
    assert other["error"].startswith("a FIFO (named pipe)") and other["not_sample"] is True
    assert "rows_0-12/data_99.ckpt" in json.dumps(lines[-1]["findings"])  # unreadable, named


def test_workers_are_bounded_by_the_cores_and_the_work_and_the_scan_says_so(clean, capsys):
    import json

    from eagle3_tui.engines.scan.options import bounded_workers, default_workers

    main(["scan", str(clean), "--json", "--no-cache", "--workers", "1000"])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    ran = json.loads(lines[-1])["summary"]["workers"]
    assert 1 <= ran <= min(default_workers(), -(-(len(lines) - 1) // 16))
    assert f"--workers 1000: {ran} ran" in err
    assert bounded_workers(1000, 10) == 1 and bounded_workers(None, 10_000) == default_workers()


def test_the_dataset_views_pipeline_gets_the_parents_paths_from_a_shards_records(clean, tmp_path, capsys):
    # the view's records are decoded ones (lazy=False): the knock-on of 21.2 was `D` with --model
    # looking for rows_0-12/rows_0-12/data_0.ckpt
    import asyncio

    from eagle3_tui.dataset.pipeline import DatasetPipeline, Findings
    from eagle3_tui.sources.local import LocalSource

    root = copy_dataset(clean, tmp_path / "ds")
    scan_json(capsys, root / "rows_0-12")

    async def run():
        pipeline = DatasetPipeline(LocalSource(), str(root), ScanOptions(workers=1), open_cache=ScanCache)
        events = [e async for e in pipeline.events()]
        return pipeline.records, [e for e in events if isinstance(e, Findings)]

    records, findings = asyncio.run(run())
    cached = [r for r in records if r.get("cached")]
    assert len(cached) == 12 and all(r["path"].startswith("rows_0-12/") for r in cached)
    assert all((root / r["path"]).is_file() for r in records)
    assert len(findings) == 1 and findings[0].complete
