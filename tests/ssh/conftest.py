"""The SSH tests' servers and datasets are the shared plugin tests/helpers/ssh.py; here only what
this area opts into."""

from __future__ import annotations

from tests.helpers.autouse import _no_ssh_agent  # noqa: F401 - autouse fixture
