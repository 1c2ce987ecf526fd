"""The Markdown/JSON builders (eagle3_tui/reports/) on real results of the engines over the demo
dataset, the writer's names and refusals, and what the text viewer takes for text."""

from __future__ import annotations

import json
import math
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from eagle3_tui.engines.results.findings import finding
from eagle3_tui.reports.compare import compare_report
from eagle3_tui.reports.dataset import dataset_report
from eagle3_tui.reports.model import Report
from eagle3_tui.reports.sample import sample_report
from eagle3_tui.reports.write import ExportError, safe_name, write
from eagle3_tui.sources.text_head import as_text

SHARD = "train/rows_0-2000"
WHEN = datetime(2026, 12, 2, 13, 40, 12, tzinfo=timezone.utc)


def strict_json(path: Path) -> dict:
    return json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))


@pytest.fixture(scope="module")
def compared(demo) -> dict:
    from eagle3_tui.engines.compare.run import compare_files

    return compare_files(str(demo / SHARD / "data_9.ckpt"), str(demo / "infer" / "fault_layers_some_s9.pt"))


def test_compare_report_holds_the_findings_and_every_pair(compared, tmp_path):
    report = compare_report(compared, where="local", created=WHEN,
                            acceptance={"a": {"top1": 0.8125, "tau": 2.5, "rows": 64}, "b": {"error": "no ids"}})
    data, md = report.data, report.markdown
    assert data["created"] == "2026-12-02T13:40:12Z" and data["view"] == "compare"
    assert [f["code"] for f in data["findings"]] == [f["code"] for f in compared["findings"]]
    assert len(data["slots"]) == 3 and all("per_token_cos" not in s for s in data["slots"])
    pair = compared["slots"][2]
    assert data["slots"][2]["cos_mean"] == pair["cos_mean"] and data["alignment"]["method"] == "ids"
    assert "**ERROR** `slot_mismatch`" in md
    assert f"| B2 ~ A2 | {pair['cos_mean']:.4f} | {pair['cos_min']:.4f} | {pair['norm_ratio_median']:.3f} |" in md
    assert f"| B2 | {compared['matrix'][2][0]:.3f} |" in md
    assert "- A: top-1 81.2%, τ 2.5 over 64 rows" in md and "- B: not scored: no ids" in md
    md_path, js_path = write(report, tmp_path, now=WHEN)
    assert md_path.name == "20261202-134012_compare_data_9.ckpt-vs-fault_layers_some_s9.pt.md"
    assert strict_json(js_path)["slots"][2]["cos_mean"] == pytest.approx(pair["cos_mean"])


def test_acceptance_in_the_exports_names_its_targets(compared, demo):
    """Both kinds of figure for one file, and why B's is not A's, reach the Markdown and the JSON."""
    from eagle3_tui.engines.read.stats import summarize_file

    a = {"top1": 0.522, "tau": 1.79, "rows": 67, "steps": [0.522, 0.552], "rows_from": "loss mask",
         "target_source": "model", "against_ids": {"top1": 0.716, "tau": 2.21, "steps": [0.716, 0.746], "rows": 67}}
    b = {"top1": 0.37, "tau": 1.5, "rows": 101, "steps": [0.37, 0.3], "rows_from": "all rows", "target_source": "ids"}
    md = compare_report(compared, where="local", acceptance={"a": a, "b": b}).markdown
    assert "- A: top-1 52.2%, τ 1.79 over 67 rows, against the target model's next token" in md
    assert "- B: top-1 37.0%, τ 1.5 over 101 rows, against the data's next token ids" in md
    assert ("B is scored otherwise: other targets: A vs model's token, B vs data's ids (A vs data's ids: 71.6%); "
            "other rows: A loss mask (67), B all rows (101)") in md
    report = sample_report(summarize_file(str(demo / SHARD / "data_9.ckpt")), where="local", acceptance=a)
    assert report.data["acceptance"]["against_ids"]["top1"] == 0.716
    assert "The same drafts against the data's next token ids: top-1 71.6%, τ 2.21" in report.markdown


def test_a_swapped_comparison_is_exported_with_its_sides_named_as_they_are(compared):
    report = compare_report(compared, where="local", roles=("inference", "training"))
    assert report.data["roles"] == ["inference", "training"]
    assert report.markdown.startswith("# eagle3-tui compare: data_9.ckpt (A, inference) vs fault_layers_some_s9.pt "
                                      "(B, training)")
    assert "- **A (inference)**:" in report.markdown and "- **B (training)**:" in report.markdown
    assert "A (training)" not in report.markdown and "A, training" not in report.markdown


def test_sample_report_with_nan_writes_null_and_says_nan(demo, tmp_path):
    from eagle3_tui.engines.read.stats import summarize_file

    summary = summarize_file(str(demo / "infer" / "fault_nan_s18.pt"))
    report = sample_report(summary, where="me@box", created=WHEN)
    bad = [p for p in report.data["parts"] if p["nan"]]
    assert bad, "the demo's NaN capture has NaN in a slot"
    row = next(line for line in report.markdown.splitlines() if line.startswith(f"| {bad[0]['label']} |"))
    assert f"| {bad[0]['nan']} | {bad[0]['inf']} | {bad[0]['first_nonfinite_row']} |" in row
    assert "computed on me@box" in report.markdown
    _, js = write(report, tmp_path, now=WHEN)
    data = strict_json(js)  # NaN statistics are null, never the non-standard NaN
    assert [p["label"] for p in data["parts"]] == [p["label"] for p in report.data["parts"]]
    for part, written in zip(report.data["parts"], data["parts"], strict=True):
        for key, value in part.items():
            if isinstance(value, float) and not math.isfinite(value):
                assert written[key] is None, key
            elif isinstance(value, float):
                assert written[key] == pytest.approx(value), key
    assert data["sample"]["path"].endswith("fault_nan_s18.pt") and data["acceptance"] is None


def test_sample_report_of_an_unreadable_file_says_why():
    report = sample_report({"path": "x/junk.bin", "error": "not a torch, safetensors or gzip file"}, where="local")
    assert "not readable as a sample: not a torch" in report.markdown and report.data["error"]


def test_dataset_report_lists_the_files_a_finding_names(demo):
    from eagle3_tui.engines.scan.file_record import scan_file

    records = []
    for name in ("data_0.ckpt", "data_1.ckpt", "data_2.ckpt"):
        st = (demo / SHARD / name).stat()
        records.append(scan_file(str(demo / SHARD), name, st.st_size, st.st_mtime))
    records.append({"path": "notes.bin", "error": "not a torch file", "size": 3, "mtime": 0.0})
    findings = [finding("duplicate", "warning", "2 files hold the same states", groups=[["data_0.ckpt", "data_1.ckpt"]]),
                finding("unreadable", "error", "1 file cannot be read", paths=["notes.bin"])]
    report = dataset_report(str(demo / SHARD), where="local", findings=findings, records=records, state="done")
    data = report.data
    assert data["counts"] == {"files": 4, "unreadable": 1, "not_samples": 0, "cached": 0}
    assert [f["path"] for f in data["files"]] == ["data_0.ckpt", "data_1.ckpt", "notes.bin"]
    mean = records[0]["slots"][0]["norm_mean"]
    assert data["files"][0]["slots"][0]["norm_mean"] == mean
    assert f"{mean:.4g}" in report.markdown and "`duplicate`" in report.markdown and "| notes.bin |" in report.markdown
    assert report.subject == "rows_0-2000"


def test_names_are_sanitised_and_never_overwrite(tmp_path):
    report = Report("sample", "../../etc/pass wd|$(rm -rf ~).pt\n", {"format": "x", "n": math.inf}, "# x\n")
    assert safe_name(report.subject) == "etc_pass_wd_rm_-rf_.pt"
    first = write(report, tmp_path, now=WHEN)
    second = write(report, tmp_path, now=WHEN)
    assert first[0] != second[0] and second[0].name.endswith("-2.md")
    assert {p.parent for p in (*first, *second)} == {tmp_path}
    assert strict_json(first[1])["n"] is None
    assert safe_name("x" * 500) == "x" * 80


def test_a_data_folder_inside_the_inspected_dataset_is_refused(tmp_path):
    report = Report("dataset", "d", {}, "")
    with pytest.raises(ExportError, match="inside the dataset"):
        write(report, tmp_path / "data" / "exports", inspected=tmp_path / "data")
    assert not (tmp_path / "data").exists()


def test_what_counts_as_text(demo, tmp_path):
    assert as_text((demo / "README.txt").read_bytes(), False).startswith("eagle3-tui demo dataset")
    assert '"hidden_size"' in as_text((demo / "model" / "config.json").read_bytes(), False)
    head = (demo / SHARD / "data_0.ckpt").read_bytes()[:4096]
    assert zipfile.is_zipfile(demo / SHARD / "data_0.ckpt") and as_text(head, True) is None
    assert as_text(bytes(range(7, 250)) * 10, False) is None  # the loader's "random bytes"
    assert as_text(b"\x1b[2J\x1b]0;x\x07" * 40, False) is None  # terminal commands are no text
    cut = "é".encode() * 10
    assert as_text(cut[:-1], True) == "é" * 9  # a character cut by the bound is dropped
    assert as_text(cut[:-1], False) is None
    assert as_text(b"\xef\xbb\xbfbom\n", False) == "bom\n"


def test_sample_report_after_identify_names_the_boundaries_and_the_layer_ids(demo):
    from eagle3_tui.engines.model.identify import attach, brief, identify_file
    from eagle3_tui.engines.read.stats import summarize_file

    path = str(demo / "train_ids_0_2_3" / "rows_0-2000" / "data_20.ckpt")  # README.txt: boundaries [1, 3, 4]
    summary = attach(dict(summarize_file(path)), brief(identify_file(path, model=str(demo / "model"))))
    report = sample_report(summary, where="local")
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in report.markdown.splitlines()
            if line.startswith(("| aux", "| final"))}
    assert [rows[f"aux{i}"].split("*")[0] for i in range(3)] == ["1", "3", "4"]
    assert rows["final"].startswith("post*")
    assert "Layer ids: slots at b {1, 3, 4}" in report.markdown
    assert [p["identified"]["boundary"] for p in report.data["parts"][:3]] == [1, 3, 4]
    assert report.data["identify"]["layers"] == 10


def test_a_report_of_hostile_names_is_written_escaped(tmp_path):
    """Found in the hostile pass of issue 34: a name that is not UTF-8 made `e` fail ("cannot
    write the report ... surrogates not allowed") after writing the JSON alone, and a name's ESC
    sequences went raw into the Markdown (`cat` on it retitled the terminal)."""
    import re

    evil = "data_1x\x1b]0;PWN\x07\x1b[31mRED\u202e\udcff.ckpt"
    report = Report("dataset", "d", {"files": [{"path": evil}]}, f"| {evil} | ok |\n")
    md, js = write(report, tmp_path, now=WHEN)
    steering = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\ud800-\udfff]")
    for path in (md, js):
        assert not steering.search(path.read_text(encoding="utf-8").replace("\n", ""))
    assert "data_1x\\x1b]0;PWN\\x07\\x1b[31mRED\\u202e\\xff.ckpt" in md.read_text()
    assert strict_json(js)["files"][0]["path"] == evil, "the JSON holds the name itself"
