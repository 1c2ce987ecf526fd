"""The real-model tests: the real target and its chats come from tests/helpers/real_world.py (a
plugin of tests/conftest.py); here only what this area opts into."""

from __future__ import annotations

from tests.helpers.autouse import _no_ssh_agent, _one_torch_thread  # noqa: F401 - autouse fixtures
