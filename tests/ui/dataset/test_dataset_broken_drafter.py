"""Issue 44, item 8: a --drafter that start-up found unusable (config.json not JSON) runs no
acceptance in the dataset view either: no accept_failed, no data file marked for the drafter's
fault, and the view says acceptance is off."""

from __future__ import annotations

import pytest

from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.tui import make_drafter_app, screen_text, wait_until


@pytest.mark.parametrize("broken", ["not json", "no weights"])
async def test_a_drafter_found_unusable_at_start_runs_no_acceptance_in_d(demo_drafter, tmp_path, broken):
    bad = tmp_path / "drafter"
    bad.mkdir()
    if broken == "not json":
        for f in (demo_drafter / "drafter").iterdir():
            (bad / f.name).symlink_to(f)
        (bad / "config.json").unlink()
        (bad / "config.json").write_text("{not json")
    else:
        (bad / "config.json").write_text((demo_drafter / "drafter" / "config.json").read_text())
    app = make_drafter_app(demo_drafter, str(bad))
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: "drafter" in main.pane.unusable, what="the start-up check")
        screen = await open_dataset(pilot, demo_drafter, on="README.txt")
        await scan_done(pilot, screen)
        assert screen.accept_state is None and screen.options.accept is None
        codes = [f["code"] for f in screen.findings]
        assert "accept_failed" not in codes and "findings_failed" not in codes, codes
        assert "acceptance off: bad --drafter" in screen_text(app)
