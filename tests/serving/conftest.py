"""serve-check tests: the engine rules (pure), the CLI on a scan-built dataset, the dataset view."""

from __future__ import annotations

from tests.helpers.autouse import _no_ssh_agent, _one_torch_thread  # noqa: F401 - autouse fixtures
