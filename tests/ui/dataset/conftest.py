"""The dataset view's record template; the datasets themselves are the shared `planted` and
`clean` fixtures (tests/helpers/scan.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def template(planted) -> dict:
    """The record of one real file of the planted dataset."""
    from eagle3_tui.engines.scan.file_record import scan_file

    path = planted / "rows_0-12" / "data_0.ckpt"
    st = path.stat()
    return scan_file(str(planted), "rows_0-12/data_0.ckpt", st.st_size, st.st_mtime)
