"""`eagle3-tui TARGET --ray ADDRESS`: the dataset view (D) scans on the cluster, with the same
findings and file statuses as the local scan; the main screen keeps browsing locally."""

from __future__ import annotations

import subprocess
import sys

from eagle3_tui.ui.dataset.source import RayOptions
from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.tui import make_app


async def _view(app, planted):
    """(finding codes, status per file, the source D scanned through) of the dataset view."""
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, planted, on="README.txt")
        await scan_done(pilot, screen)
        return (sorted(f["code"] for f in screen.findings), {r.path: r.status for r in screen.rows.records},
                screen.source, app.main_screen.source)


async def test_the_dataset_view_scans_on_the_cluster(ray_cluster, planted, tmp_path, monkeypatch):
    codes, status, _, _ = await _view(make_app(planted), planted)
    monkeypatch.setenv("EAGLE3_TUI_CACHE_DIR", str(tmp_path / "cache"))  # nothing cached: Ray reads all
    app = make_app(planted)
    app.ray = RayOptions(ray_cluster.address, batch=4)
    ray_codes, ray_status, source, browsing = await _view(app, planted)
    assert type(source).__name__ == "RaySource" and source is not browsing
    assert source._ray is not None  # it connected to the cluster and read there
    assert (ray_codes, ray_status) == (codes, status)
    assert len(status) == sum(1 for p in planted.rglob("*") if p.is_file())


def test_ray_options_without_ray_are_one_line():
    run = subprocess.run([sys.executable, "-m", "eagle3_tui", ".", "--ray-batch", "4"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2 and run.stderr.strip() == "eagle3-tui: --ray-local-roots and --ray-batch go with --ray"
