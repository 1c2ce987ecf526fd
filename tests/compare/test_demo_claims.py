"""Every claim in the demo's README.txt is what `compare` reports: the strongest end-to-end test."""

from __future__ import annotations

import pytest

from eagle3_tui.engines.compare import compare_files

from tests.helpers.compare_world import codes, finding


def _readme_rows(d):
    rows = []
    for line in (d / "README.txt").read_text().splitlines():
        parts = line.split(" | ")
        if len(parts) == 5 and parts[0].startswith("infer/"):
            rows.append(parts)
    return rows


def test_readme_lists_a_correct_capture_and_every_fault(demo):
    d, manifest = demo
    rows = _readme_rows(d)
    assert len(rows) == len(manifest["infer"]) >= 15
    assert sum(r[2] == "none" for r in rows) >= 4


def test_every_capture_gets_the_finding_the_readme_claims(demo):
    d, manifest = demo
    extras = {c["file"]: c for c in manifest["infer"]}
    for capture, train, expect, _fmt, note in _readme_rows(d):
        r = compare_files(str(d / train), str(d / capture))
        assert "error" not in r, (capture, r.get("error"))
        want = set() if expect == "none" else {expect}
        assert codes(r) == want, (capture, note, r["findings"])
        c = extras[capture]
        if "offset" in c:
            assert finding(r, expect)["offset"] == c["offset"]
        if "factor" in c:
            assert finding(r, expect)["factor"] == pytest.approx(c["factor"], rel=0.01)
        if "position" in c:
            assert finding(r, expect)["position"] == c["position"]
        if "nan" in c:
            f = finding(r, expect)["b"]
            assert (f["nan"], f["inf"], f["first_row"]) == (c["nan"], c["inf"], c["first"])
        if expect == "none":
            assert all(m["cos_mean"] > 0.999 for m in r["slots"]), capture


def test_the_pt_and_gz_copies_compare_like_the_ckpt(demo):
    d, _ = demo
    results = [compare_files(str(d / t), str(d / "infer/ok_bf16_s0.pt"))
               for t in ("train/rows_0-2000/data_0.ckpt", "train_pt/rows_0-2000/data_0.pt")]
    assert results[0]["matrix"] == results[1]["matrix"] and results[0]["findings"] == results[1]["findings"] == []
    gz = compare_files(str(d / "train/rows_0-2000/data_3.ckpt.gz"), str(d / "train_pt/rows_0-2000/data_3.pt"))
    assert gz["findings"] == [] and all(m["max_abs_err"] == 0 for m in gz["slots"])
