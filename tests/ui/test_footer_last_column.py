"""Issue 44, item 10: at 80x24 the dataset view's footer ended in a stray `H`: its keys run on
under the palette key, which stopped one column short of the screen's edge."""

from __future__ import annotations

import pytest

from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.tui import make_app, screen_text


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_footer_ends_with_the_palette_key_and_nothing_after_it(demo, size):
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        screen = await open_dataset(pilot, demo)
        await scan_done(pilot, screen)
        last = screen_text(app).splitlines()[-1]
        assert len(last) == size[0] and last.endswith("▏^p palette "), repr(last)
