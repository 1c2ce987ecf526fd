"""What a source says of the Python it computes with (engines/read/torch_gate.py runtime) and of
its model folders (sources/agent.py check_folders)."""

from __future__ import annotations

from typing import TypedDict


class FolderCheck(TypedDict):
    """The agent's check_folders answer (sources/agent.py): engines/model/folder_check.py's
    problems, "model" | "drafter" -> one line."""

    problems: dict[str, str]

class Runtime(TypedDict):
    """Which Python and torch computed a source's results (engines/read/torch_gate.py runtime,
    Source.runtime): summary --json, scan --json's summary, the TUI header."""

    computed: str  # "local" | "remote"
    python: str | None
    executable: str | None
    torch: str | None  # its version, None without torch
    pickles: str  # "loaded safely" | "refused (torch below 2.10)" | "loaded unsafely (--trust-data)" | ...
