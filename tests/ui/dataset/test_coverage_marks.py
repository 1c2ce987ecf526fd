"""The draft vocabulary's coverage names the files most outside it as examples: a warning about the
drafter's vocabulary, not about those files. They keep their own mark (✓) in the dataset view and in
the browser; before, the browser marked 5 of the demo's well-formed training files "!" whenever the
record cache held their draft-vocabulary counts."""

from __future__ import annotations

import shutil

from tests.helpers.compare_view import SHARD
from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.tui import make_app, wait_until


async def test_files_named_by_the_coverage_keep_their_own_mark(demo, tmp_path):
    root = tmp_path / "data"
    shutil.copytree(demo / SHARD, root / SHARD)
    shutil.copytree(demo / "vocab_mapping", root / "vocab_mapping")
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, tmp_path, on="data")  # its scan finds vocab_mapping/ in it
        await scan_done(pilot, screen)
        coverage = next(f for f in screen.findings if f["code"] == "draft_vocab_coverage")
        assert coverage["severity"] == "warning" and coverage["paths"], coverage  # 77.9% on the demo
        in_view = {r.get("path"): r.get("status") for r in screen.rows.records}
        assert {p.rsplit("/", 1)[1] for p in coverage["paths"]} <= {f.name for f in (root / SHARD).iterdir()}
        assert {in_view[p] for p in coverage["paths"]} == {"ok"}, (coverage["paths"], in_view)

        await pilot.press("escape")
        main = app.main_screen
        await wait_until(pilot, lambda: app.screen is main, what="back to the browser")
        main.open_folder(str(root / SHARD))
        await wait_until(pilot, lambda: main.listing_done and len(main.browser.scan_marks) == 24,
                         what="the browser's marks of the shard")
        assert set(main.browser.scan_marks.values()) == {"ok"}, main.browser.scan_marks
