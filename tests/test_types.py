"""Records are typed where they travel, and built one way: a finding only by results.finding,
and the engines' entry points and the sources say which result type they give (read from the
source, so no module is imported: torch stays out of this test)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "eagle3_tui"

#: the one place a finding dict is written out
CONSTRUCTOR = PACKAGE / "engines" / "results" / "findings.py"
#: modules the lead is reshaping in another branch; they move to finding() when that lands
NOT_YET: set = set()

#: (module, qualified function) -> the result type its annotation must name
ANNOTATED = {
    ("engines/read/stats.py", "summarize_file"): "Summary",
    ("engines/read/stats.py", "summarize"): "Summary",
    ("engines/compare/run.py", "compare_files"): "ComparisonResult",
    ("engines/compare/run.py", "compare"): "ComparisonResult",
    ("engines/model/identify.py", "identify_file"): "IdentifyResult",
    ("engines/model/identify.py", "identify"): "IdentifyResult",
    ("engines/model/identify.py", "summarize_identified"): "Summary",
    ("engines/model/accept.py", "accept_file"): "AcceptResult",
    ("engines/model/accept.py", "accept"): "AcceptResult",
    ("engines/scan/file_record.py", "scan_file"): "ScanRecord",
    ("engines/scan/records.py", "scan_tree"): "Iterator[ScanRecord]",
    **{
        (module, f"{cls}.{method}"): kind
        for module, cls in (("sources/base.py", "Source"), ("sources/local.py", "LocalSource"),
                            ("sources/ssh.py", "SshSource"))
        for method, kind in (("summarize", "Summary"), ("compare", "ComparisonResult"),
                             ("identify", "IdentifyResult"), ("accept", "AcceptResult"),
                             ("scan", "AsyncIterator[ScanRecord | ScanProgressItem]"))
    },
}


def _keys(node: ast.Dict) -> set[str]:
    return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def test_findings_are_built_by_the_constructor_only():
    """A dict literal with "code" and "severity" keys outside results/findings.py is a finding built by
    hand: its keys or its severity could drift from what the views and --json readers expect."""
    by_hand = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in (CONSTRUCTOR, *NOT_YET):
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Dict) and {"code", "severity"} <= _keys(node):
                by_hand.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert not by_hand, "build findings with engines.results.findings.finding(): " + ", ".join(by_hand)


def test_the_constructor_gives_the_finding_every_reader_expects():
    from eagle3_tui.engines.results.findings import blocking, finding, sort_findings

    made = finding("slot_mismatch", "warning", "A slot 1 is B slot 2", slot=1, paths=["a.pt"])
    assert made == {"code": "slot_mismatch", "severity": "warning", "message": "A slot 1 is B slot 2",
                    "slot": 1, "paths": ["a.pt"]}
    assert list(made)[:3] == ["code", "severity", "message"]
    note = finding("slot_ambiguous", "info", "two boundaries match")
    assert sort_findings([note, made]) == [made, note] and blocking([made]) and not blocking([note])


def _functions(path: Path) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[f"{node.name}.{item.name}"] = item
    return found


def test_entry_points_and_sources_name_their_result_type():
    wrong = []
    functions: dict[str, dict] = {}
    for (module, name), kind in ANNOTATED.items():
        if module not in functions:
            functions[module] = _functions(PACKAGE / module)
        node = functions[module].get(name)
        got = ast.unparse(node.returns) if node is not None and node.returns is not None else None
        if got != kind:
            wrong.append(f"{module} {name}: {got} (want {kind})")
    assert not wrong, "; ".join(wrong)


def test_the_result_types_are_the_ones_the_engines_build():
    """The types name the keys the engines write: a renamed key shows up here, not in a view."""
    from eagle3_tui.engines.results import accept, compare, identify, scan

    assert {"path", "tokens", "k", "slots", "final", "signature", "fingerprint", "error",
            "not_sample", "cached", "computed"} <= set(scan.ScanRecord.__annotations__)
    assert set(scan.SlotRecord.__annotations__) == {"norm_mean", "norm_bulk", "norm_max", "nan", "inf",
                                                       "first_nonfinite_row"}
    assert {"a", "b", "alignment", "findings", "error"} <= set(compare.ComparisonResult.__annotations__)
    assert {"slots", "final", "conventions", "findings", "error"} <= set(identify.IdentifyResult.__annotations__)
    assert {"top1", "steps", "tau", "per_token", "error"} <= set(accept.AcceptResult.__annotations__)
    assert not hasattr(compare, "Comparison")  # the compare engine's class keeps that name


def test_every_scan_record_field_is_in_the_type_and_the_view_keeps_it(tmp_path):
    """A real tree (samples, a NaN, a non-sample, a vocabulary mapping, a dead link, a README):
    every key of every record is a ScanRecord field, so the dataset view, whose Record takes its
    fields from the type, keeps all of them but the few only the CLI's report reads."""
    from eagle3_tui.engines.results.scan import ScanRecord, SlotRecord
    from eagle3_tui.engines.scan.records import scan_tree
    from eagle3_tui.ui.dataset.model import _NOT_KEPT, Record
    from tests.helpers.tree import make_tree

    root = make_tree(tmp_path / "data")
    records = list(scan_tree(str(root), workers=1))
    assert {"error", "not_sample"} <= {k for r in records for k in r}  # the odd files are in
    fields = set(ScanRecord.__annotations__)
    for r in records:
        assert set(r) <= fields, (r["path"], set(r) - fields)
        for part in [*r.get("slots", ()), *([r["final"]] if r.get("final") else [])]:
            assert set(part) <= set(SlotRecord.__annotations__), r["path"]
        kept = Record(r)
        assert {k for k in r if k not in _NOT_KEPT} == {k for k in fields if k in kept}, r["path"]


# ------------------------------------------------------------------------------- the dataset pipeline


def _keys_of(kind) -> set[str]:
    """Every key a TypedDict names, its bases' included (__annotations__ holds only its own)."""
    return set(getattr(kind, "__required_keys__", set())) | set(getattr(kind, "__optional_keys__", set()))


def _pipeline_events(root, **options):
    import asyncio

    from eagle3_tui.dataset.cache import ScanCache
    from eagle3_tui.dataset.pipeline import DatasetPipeline
    from eagle3_tui.engines.scan.options import ScanOptions
    from eagle3_tui.sources.local import LocalSource

    lazy = options.pop("lazy", False)
    cache = options.pop("cache")

    async def run():
        pipeline = DatasetPipeline(LocalSource(), str(root), ScanOptions(workers=1, **options),
                                   open_cache=lambda: ScanCache(cache), lazy=lazy)
        return pipeline, [e async for e in pipeline.events()]

    return asyncio.run(run())


def test_a_real_scan_through_the_pipeline_fits_the_record_and_progress_types(tmp_path):
    """The dataset pipeline over a written tree, twice (the second from the cache, records kept
    undecoded): every record fits DatasetRecord (a ScanRecord, or a cached stub), every progress
    event carries ScanProgressData's keys, and every finding is a Finding with its code, severity
    and message first."""
    from eagle3_tui.dataset.pipeline import Findings, Finished, Progress, ScanEnded
    from eagle3_tui.dataset.shapes import DatasetRecord
    from eagle3_tui.engines.results.findings import Finding
    from eagle3_tui.engines.results.scan import ScanProgressData, ScanRecord
    from tests.helpers.tree import make_tree

    root = make_tree(tmp_path / "data")
    cache = tmp_path / "cache.sqlite"
    assert _keys_of(ScanRecord) <= _keys_of(DatasetRecord)
    for lazy in (False, True):
        pipeline, events = _pipeline_events(root, cache=cache, lazy=lazy)
        records = [e for e in events if isinstance(e, dict)]
        assert records and records == pipeline.records
        fields = _keys_of(ScanRecord) if not lazy else _keys_of(DatasetRecord)
        for r in records:
            assert set(r) <= fields, (lazy, r["path"], set(r) - fields)
        if lazy:  # the second scan: the samples come from the cache as stubs with their JSON text
            assert any("raw" in r and "variant" in r for r in records)
        progress = [e.progress for e in events if isinstance(e, Progress)]
        assert progress and all(set(p) == _keys_of(ScanProgressData) for p in progress)
        assert [e.outcome for e in events if isinstance(e, ScanEnded)] == ["done"]
        findings = [f for e in events if isinstance(e, (Findings, Finished)) for f in e.findings]
        assert findings
        for f in findings:
            assert list(f)[:3] == ["code", "severity", "message"]
            # the details a reader takes by name are the ones Finding names with their types
            named = {k for k in f if k in _keys_of(Finding)}
            assert all(isinstance(f[k], list) for k in named & {"paths", "groups", "agree", "scores"}), f


def _identified(path: str, shift: int = 0) -> dict:
    """What Source.identify answers for a 3-slot file of a 4-layer model (the slots at b 1, 2, 3
    plus `shift`), as engines/model/identify.py writes it."""
    slots = [{"label": f"aux{i}", "boundary": 1 + i + shift, "status": "match", "cosine": 0.99,
              "norm_ratio": 1.0, "margin": 0.1, "second": None} for i in range(3)]
    return {"path": path, "model": "m", "layers": 4, "tokens": 48, "slots": slots,
            "final": {"norm": "pre", "boundary": 4, "status": "match", "cosine": 1.0, "norm_ratio": 1.0},
            "conventions": {"readings": [{"ids": [0, 1, 2], "ids_from": "eagle_config", "reading": "output",
                                          "boundaries": [1, 2, 3]}]},
            "findings": [], "computed": "local"}


def test_the_layers_entry_and_the_acceptance_plan_have_their_types_keys(tmp_path):
    """The layers step's picks and "layers" entries, and the acceptance step's plan, scores and
    "acceptance" entries, over the records of a real scan: no key outside their TypedDicts (the
    CLI's --json, the dataset view and serve-check read them by these names)."""
    from eagle3_tui.dataset import acceptance, layers
    from eagle3_tui.dataset.findings import dataset_findings
    from eagle3_tui.dataset.shapes import (
        AcceptanceEntry, AcceptGroup, AcceptScore, DrafterReading, LayerFinal, LayersEntry, LayerSlot, Pick,
        Reading, ReadingFit, VerifyPlan,
    )
    from eagle3_tui.engines.scan.records import scan_tree
    from tests.helpers.tree import make_tree

    records = list(scan_tree(str(make_tree(tmp_path / "data")), workers=1))
    findings = dataset_findings(records)
    picks, checks = layers.plan(records, findings, identify_all=True)
    assert picks and set(checks) == _keys_of(VerifyPlan)
    assert all(set(p) <= _keys_of(Pick) for p in picks)
    # the majority at b 1, 2, 3; one verified file a layer deeper
    results = [_identified(p["path"], shift=int(i == len(picks) - 1)) for i, p in enumerate(picks)]
    entries, extra = layers.report(picks, results, drafter="drafter", checks=checks)
    assert entries and {f["code"] for f in extra} >= {"layer_minority", "layers_checked"}
    for e in entries:
        assert set(e) <= _keys_of(LayersEntry), set(e) - _keys_of(LayersEntry)
        assert all(set(s) <= _keys_of(LayerSlot) for s in e["slots"])
        assert set(e["final"]) <= _keys_of(LayerFinal)
        assert set(e["reading"]) == _keys_of(Reading)
        assert all(set(f) == _keys_of(ReadingFit) for f in e["reading"]["fits"])
        assert set(e["drafter"]) <= _keys_of(DrafterReading)
    assert layers.format_layers(entries, "m").startswith("layers (--model m): named from ")

    plan = acceptance.choose_files(records, findings)
    assert plan and all(set(g) <= _keys_of(AcceptGroup) and g["score"] for g in plan)
    scored = [{"path": p, "top1": 0.5, "tau": 1.5, "steps": [0.5, 0.3, 0.2], "rows": 30, "computed": "local"}
              for g in plan for p in g["score"]]
    assert all(set(s) <= _keys_of(AcceptScore) for s in scored)
    entries, extra = acceptance.report(plan, scored, "drafter")
    assert entries and all(set(e) <= _keys_of(AcceptanceEntry) for e in entries)
    assert entries[0]["top1"] == 0.5 and entries[0]["steps"] == pytest.approx([0.5, 0.3, 0.2])


def test_the_scan_progress_is_written_once_for_the_cli_and_the_view():
    """The dataset view's progress line and the CLI's stderr line are the pipeline's one text."""
    from eagle3_tui.commands._scan_text import progress_line
    from eagle3_tui.dataset.pipeline import progress_text

    p = {"files_done": 30, "files_total": 100, "files_read": 20, "listing_done": True,
         "bytes_done": 30 << 26, "bytes_total": 100 << 26, "bytes_read": 20 << 19, "seconds": 2.0, "workers": 2}
    assert progress_line(p) == "scanning:" + progress_text(p)
    assert progress_text(p) == "  30% · 30/100 files · read 10 MiB (0.50 MiB a file, 5.00 MiB/s) · ETA 7 s"
    assert progress_text(p, 40, cancelled=True).endswith("ETA 6 s · cancelled")  # the view counts its own


def test_the_views_record_declares_the_fields_it_keeps():
    """Record (ui/dataset/model.py) keeps ScanRecord's fields in __slots__ and names their types
    for the type checker: the two lists are the same, and a record read back is typed by them."""
    from eagle3_tui.engines.results.scan import ScanRecord
    from eagle3_tui.ui.dataset.model import _NOT_KEPT, Record

    kept = {name for name in ScanRecord.__annotations__ if name not in _NOT_KEPT}
    assert set(Record.__annotations__) == kept | {"status", "top1"}
    assert set(Record.__slots__) == kept | {"status", "top1"}
