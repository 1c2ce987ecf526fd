"""The dataset view over a dataset with a draft vocabulary beside it: the coverage finding is the
scan's, with the counts the CLI's finding has."""

from __future__ import annotations

from eagle3_tui.dataset.findings import dataset_findings
from eagle3_tui.engines.scan.records import scan_tree
from tests.helpers.dataset_view import open_dataset, scan_done, without_cache
from tests.helpers.tui import make_app, screen_text


async def test_the_view_names_the_draft_vocab_coverage_of_the_scan(dataset, monkeypatch):
    expected = {f["code"]: f for f in dataset_findings(list(scan_tree(str(dataset), workers=1)))}
    without_cache(monkeypatch)
    app = make_app(dataset.parent)
    async with app.run_test(size=(120, 40)) as pilot:
        # D on the dataset's folder: its scan finds the mapping in vocab_mapping/ as the CLI's does
        screen = await open_dataset(pilot, dataset.parent, on=dataset.name)
        await scan_done(pilot, screen)
        found = {f["code"]: f for f in screen.findings}
        assert "draft_vocab_coverage" in found, sorted(found)
        shown = found["draft_vocab_coverage"]
        want = expected["draft_vocab_coverage"]
        assert (shown["in_vocab"], shown["out_of_vocab"]) == (want["in_vocab"], want["out_of_vocab"])
        assert "draft_vocab_coverage (4 files)" in screen_text(app), screen_text(app)
