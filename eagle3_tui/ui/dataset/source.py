"""The Source the dataset view (D) scans through: the open one, or with `eagle3-tui --ray` the
same files read as Ray tasks (dataset/ray_runner.py; for an SSH target, on the box's own
cluster through the agent), as `scan --ray` does. Browsing, the sample view and `I` keep the
open Source: only the dataset view's whole-folder work goes to the cluster."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from eagle3_tui.sources.base import Source
    from eagle3_tui.target import Target


@dataclass(frozen=True)
class RayOptions:
    address: str = "auto"
    local_roots: bool = False
    batch: int | None = None


class RayHost(Protocol):
    """The app: --ray's options, and the one local source that scans on that cluster."""

    ray: RayOptions | None
    ray_source: Source | None


def dataset_source(app: RayHost, source: Source, folder: Target) -> Source:
    """`source`, or the source that scans `folder` on the cluster of app.ray (one per app)."""
    options = app.ray
    if options is None:
        return source
    # lazy: the Ray runner only when --ray was given
    from eagle3_tui.dataset.ray_choice import ray_source

    if folder.is_remote:
        return ray_source(source, options.address, local_roots=options.local_roots, batch=options.batch)
    if app.ray_source is None:
        app.ray_source = ray_source(None, options.address, local_roots=options.local_roots, batch=options.batch)
    return app.ray_source
