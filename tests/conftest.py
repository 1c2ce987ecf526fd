"""Fixtures shared by every test area. Area fixtures live in tests/<area>/conftest.py."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _user_data_in_tmp(tmp_path_factory, monkeypatch):
    """No test may read or write the real user's bookmarks or caches."""
    monkeypatch.setenv("EAGLE3_TUI_DATA_DIR", str(tmp_path_factory.mktemp("user-data")))
    monkeypatch.setenv("EAGLE3_TUI_CACHE_DIR", str(tmp_path_factory.mktemp("user-cache")))
