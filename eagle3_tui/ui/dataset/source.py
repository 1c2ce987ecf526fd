"""The Source the dataset view (D) scans through: the open one, or with `eagle3-tui --ray` the
same files read as Ray tasks (dataset/ray_runner.py; for an SSH target, on the box's own
cluster through the agent), as `scan --ray` does. Browsing, the sample view and `I` keep the
open Source: only the dataset view's whole-folder work goes to the cluster."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RayOptions:
    address: str = "auto"
    local_roots: bool = False
    batch: int | None = None


def dataset_source(app: Any, source: Any, folder: Any) -> Any:
    """`source`, or the source that scans `folder` on the cluster of app.ray (one per app)."""
    options: RayOptions | None = getattr(app, "ray", None)
    if options is None:
        return source
    if folder.is_remote:
        source.ray, source.ray_local_roots, source.ray_batch = options.address, options.local_roots, options.batch
        return source
    ray_source = getattr(app, "_ray_source", None)
    if ray_source is None:
        from eagle3_tui.dataset.ray_runner import RaySource

        ray_source = app._ray_source = RaySource(options.address, local_roots=options.local_roots,
                                                 batch=options.batch)
    return ray_source
