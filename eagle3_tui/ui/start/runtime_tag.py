"""What the TUI says of the Python and torch that read the files (engines/read/torch_gate.py):
a tag on the location line, and the gate's one line for the status line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eagle3_tui.engines.read import torch_gate

if TYPE_CHECKING:
    from eagle3_tui.sources.base import Source


def runtime_tag(source: Source | None) -> str:
    """" · py 3.11.7 · torch 2.5.1 · .pt refused" once the source knows which Python computes
    (an SSH box: after the agent's hello), else ""."""
    if source is None or not source.runtime_known:
        return ""
    rt = source.runtime()
    tag = f" · py {rt['python']} · torch {rt['torch'] or 'none'}"
    if torch_gate.trusted():
        return tag + " · UNSAFE .pt loads (--trust-data)"
    return tag + (" · .pt refused" if rt["pickles"].startswith("refused") else "")


def runtime_tags(source: Source | None) -> list[str]:
    """runtime_tag() and, for this machine with a safe torch, shorter ones the location line may
    fall back to when the path would not fit: there the path matters more than versions the user
    installed. A box's tag, a refusal and --trust-data are never shortened."""
    tag = runtime_tag(source)
    if source is None or not tag or torch_gate.trusted() or source.computed != "local" or tag.endswith(".pt refused"):
        return [tag]
    return [tag, f" · torch {source.runtime()['torch'] or 'none'}", ""]


def pickle_line(source: Source | None) -> str | None:
    """The gate's line for the status line when this source's torch may not unpickle."""
    if source is None or source.pickle_problem is None:
        return None
    if torch_gate.trusted():
        return f"--trust-data: .pt files are loaded although {source.pickle_problem.split(' cannot ')[0]} is below 2.10"
    return source.pickle_problem
