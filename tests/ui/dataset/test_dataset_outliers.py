"""The dataset view names a scattered minority (signature_outliers) and filters the table to its
files, as `scan` does (issue 23)."""

from __future__ import annotations

import random

import pytest

from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.outlier_world import modelopt_set, replant
from tests.helpers.tui import make_app, screen_text

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def scattered(tmp_path_factory):
    root = tmp_path_factory.mktemp("tui-outliers") / "data"
    files = modelopt_set(root, 60, seed=21)
    odd = sorted(random.Random(2).sample([f.name for f in files], 5))
    for name in odd:
        replant(root / name, +1)
    return root, odd


@pytest.mark.parametrize("size", [(160, 50), (80, 24)])
async def test_the_view_names_the_scattered_files_and_filters_to_them(scattered, size):
    root, odd = scattered
    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        screen = await open_dataset(pilot, root.parent, on=root.name)
        await scan_done(pilot, screen)
        codes = [f["code"] for f in screen.findings]
        assert "signature_outliers" in codes, codes
        screen.findings_list.focus()
        screen.findings_list.highlighted = codes.index("signature_outliers")
        await pilot.press("enter")
        await pilot.pause()
        assert sorted(screen.rows.records[i].path for i in screen.rows.view) == odd
        assert "showing the 5 files of signature_outliers" in screen_text(app)
