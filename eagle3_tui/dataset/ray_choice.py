"""Which Source scans a folder on a Ray cluster: one choice for `scan --ray` (commands/_ray.py)
and the TUI's dataset view with `eagle3-tui --ray` (ui/dataset/source.py). An SSH target's own
source is told to scan on the box's cluster (its agent connects there); a local one is a
RaySource here (dataset/ray_runner.py)."""

from __future__ import annotations

from typing import Any

from eagle3_tui.dataset.ray_runner import RaySource


def ray_source(source: Any, remote: bool, address: str, *, local_roots: bool = False, batch: int | None = None,
               quiet: bool = False) -> Any:
    """`source` (an SSH target's open Source, or None for a local one) set to scan on the
    cluster at `address`; for a local target a new RaySource. `quiet`: Ray's own start-up lines
    kept off the terminal (the CLI's)."""
    if remote:
        source.ray, source.ray_local_roots, source.ray_batch = address, local_roots, batch
        return source
    return RaySource(address, local_roots=local_roots, batch=batch, quiet=quiet)
