"""`scan --ray`: a LocalSource whose scans read their files as Ray tasks on an existing cluster
(engines/scan/ray_tasks.py: the executor), and whose per-file model work (--model, --accept) runs
on Ray actors (dataset/ray_models.py). Everything else is the local scan's own.

    source = RaySource(address="auto", local_roots=False)
    pipeline = DatasetPipeline(source, "/shared/data", options)

Ray is imported only when such a source connects; without it, RayMissing says how to install it.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

from eagle3_tui.dataset.ray_models import ModelPool
from eagle3_tui.engines.results.accept import AcceptOptions, AcceptResult
from eagle3_tui.engines.results.identify import IdentifyOptions, IdentifyResult
from eagle3_tui.engines.scan import ray_tasks
from eagle3_tui.engines.scan.ray_tasks import INSTALL_HINT, RayScan  # noqa: F401 - the hint, for callers
from eagle3_tui.sources.base import SourceError
from eagle3_tui.sources.local import LocalSource

if TYPE_CHECKING:
    from typing import Unpack


class RayMissing(SourceError):
    """Ray cannot be imported (the extra is not installed)."""


def import_ray() -> Any:
    """The ray module (RayMissing without it)."""
    try:
        return ray_tasks.import_ray()
    except ray_tasks.RayUnavailable as err:
        raise RayMissing(str(err)) from None


def connect(address: str | None, quiet: bool = False) -> Any:
    """The ray module, connected to the cluster at `address` (engines/scan/ray_tasks.py connect)."""
    try:
        return ray_tasks.connect(address, quiet=quiet)
    except ray_tasks.RayNotInstalled as err:
        raise RayMissing(str(err)) from None
    except ray_tasks.RayUnavailable as err:
        raise SourceError(str(err)) from None


class RaySource(LocalSource):
    """The local machine's Source whose scans read their files on a Ray cluster."""

    computed = "ray"

    def __init__(self, address: str | None = "auto", *, local_roots: bool = False, batch: int | None = None,
                 quiet: bool = False) -> None:
        self.address = address
        #: Ray's own stderr noise while connecting goes nowhere (the CLI; the TUI's screen is stderr)
        self.quiet = quiet
        self.local_roots = local_roots
        self.batch = batch
        self._ray: Any = None  # the ray module once connected
        self._models: ModelPool | None = None
        self._releasing: threading.Thread | None = None

    @property
    def where(self) -> str:
        # the cache's host: with local roots the files are the nodes', not this machine's
        return f"ray:{self.address or 'auto'}" if self.local_roots else "local"

    async def connect(self) -> None:

        self._ray = await asyncio.to_thread(connect, self.address, self.quiet)

    def release(self) -> None:
        """The command is done with the cluster (its scan ended, no model work follows): leave it
        in the background while the findings are computed. Leaving (ray.shutdown and the exit
        handlers it spares) took 0.6-0.8 s after the findings; close() waits for it."""
        if self._ray is None or self._models is not None or self._releasing is not None:
            return
        ray, self._ray = self._ray, None
        self._releasing = threading.Thread(target=ray.shutdown, name="ray-shutdown", daemon=True)
        self._releasing.start()

    async def close(self) -> None:
        if self._releasing is not None:

            await asyncio.to_thread(self._releasing.join)
        await super().close()

    # --model / --accept: the per-file model work on actors, one model each (dataset/ray_models.py)

    def models(self) -> ModelPool:
        if self._models is None:
            self._models = ModelPool(self._ray or connect(self.address, self.quiet))
        return self._models

    @property
    def parallel(self) -> int:
        """Calls identify_picks and score keep in flight: one per actor."""
        return self.models().parallel

    async def identify(self, path: str, *, model: str, **options: Unpack[IdentifyOptions]) -> IdentifyResult:
        return await self.models().identify(path, model, options)

    async def accept(self, path: str, drafter: str, *, model: str | None = None, steps: int = 3,
                     all_rows: bool = False, order: list[int] | None = None,
                     ids_from: str | None = None) -> AcceptResult:
        options: AcceptOptions = {"model": model, "steps": steps, "all_rows": all_rows, "order": order}
        if ids_from is not None:  # the actor's accept_file takes it as LocalSource's does
            options["ids_from"] = ids_from
        return await self.models().accept(path, drafter, options)

    def scan_executor(self) -> RayScan:
        if self._ray is None:
            self._ray = connect(self.address, self.quiet)
        return RayScan(self._ray, local_roots=self.local_roots, batch=self.batch)
