"""The datasets (`clean`, `planted`) and the SSH servers are the shared plugins
tests/helpers/scan.py and tests/helpers/ssh.py; here only what this area opts into."""

from __future__ import annotations

from tests.helpers.autouse import _no_ssh_agent, _one_torch_thread  # noqa: F401 - autouse fixtures
