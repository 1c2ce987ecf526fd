"""Which Source scans a folder on a Ray cluster: one choice for `scan --ray` (commands/_ray.py)
and the TUI's dataset view with `eagle3-tui --ray` (ui/dataset/source.py). An SSH target's own
source is told to scan on the box's cluster (its agent connects there); a local one is a
RaySource here (dataset/ray_runner.py)."""

from __future__ import annotations

from eagle3_tui.dataset.ray_runner import RaySource
from eagle3_tui.sources.base import Source


def ray_source(source: Source | None, address: str, *, local_roots: bool = False, batch: int | None = None,
               quiet: bool = False) -> Source:
    """`source` (an SSH target's open Source; None for a local target) set to scan on the cluster
    at `address`; for a local target a new RaySource. `quiet`: Ray's own start-up lines kept off
    the terminal (the CLI's)."""
    if source is None:
        return RaySource(address, local_roots=local_roots, batch=batch, quiet=quiet)
    from eagle3_tui.sources.ssh import SshSource  # lazy: asyncssh, only for a remote target

    if isinstance(source, SshSource):  # the box's agent runs the scan on its own cluster
        source.ray, source.ray_local_roots, source.ray_batch = address, local_roots, batch
    return source
