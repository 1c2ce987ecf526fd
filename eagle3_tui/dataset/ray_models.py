"""`scan --ray` with --model / --accept: the per-file model work (identify, the drafter's
acceptance) on Ray actors, one model per actor.

    pool = ModelPool(ray)                      # actors made on the first call
    result = await pool.call("identify", path, model, {"tokens": 256, ...})

An actor is a process that keeps the model it loaded (engines/model keeps one resident), so each
model is loaded once per actor, not once per file. A cluster with GPUs gets one actor per GPU
(num_gpus=1: Ray sets CUDA_VISIBLE_DEVICES, identify's device "auto" takes it); a cluster without
gets one CPU actor per node (a model per CPU would not fit in memory). Calls go to the first
free actor; the callers (dataset/layers.py identify_picks, dataset/acceptance.py score) keep
`parallel` calls in flight and take the results in order, so they stream as they come.
An actor that dies is restarted and its call retried once; a call that still fails comes back
as an error result saying why, never as an exception. Cancelling the await cancels the call.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

from eagle3_tui.engines.results.accept import AcceptOptions, AcceptResult
from eagle3_tui.engines.results.errors import error_result
from eagle3_tui.engines.results.identify import IdentifyOptions, IdentifyResult
from eagle3_tui.engines.scan.ray_tasks import lost_reason

#: restarts of an actor whose process or node died, and retries of the call it was running
ACTOR_RESTARTS = 1


class _Models:
    """The actor: the engines' own functions, in a process that keeps its model."""

    def identify(self, path: str, model: str, options: IdentifyOptions) -> IdentifyResult:
        from eagle3_tui.engines.model.identify import identify_file  # lazy: in the actor only

        return identify_file(path, model, **options)

    def accept(self, path: str, drafter: str, options: AcceptOptions) -> AcceptResult:
        from eagle3_tui.engines.model.accept import accept_file  # lazy: in the actor only

        return accept_file(path, drafter, **options)


class ActorOptions(TypedDict, total=False):
    """The Ray options of a model actor: a GPU each, or spread over the nodes."""

    num_gpus: int
    num_cpus: int
    scheduling_strategy: str


def actor_shape(resources: dict[str, float], nodes: int) -> tuple[int, ActorOptions]:
    """(how many actors, their Ray options) for a cluster's resources."""
    gpus = int(resources.get("GPU", 0))
    if gpus >= 1:
        return gpus, {"num_gpus": 1, "num_cpus": 1}
    return max(1, nodes), {"num_cpus": 1, "scheduling_strategy": "SPREAD"}


class ModelPool:
    def __init__(self, ray) -> None:
        self.ray = ray
        self._free: asyncio.Queue | None = None
        self.size = 0

    def _start(self) -> asyncio.Queue:
        if self._free is None:
            nodes = sum(1 for n in self.ray.nodes() if n.get("Alive"))
            self.size, options = actor_shape(self.ray.cluster_resources(), nodes)
            cls = self.ray.remote(_Models).options(max_restarts=ACTOR_RESTARTS, max_task_retries=ACTOR_RESTARTS,
                                                   **options)
            self._free = asyncio.Queue()
            for _ in range(self.size):
                self._free.put_nowait(cls.remote())
        return self._free

    @property
    def parallel(self) -> int:
        self._start()
        return self.size

    async def identify(self, path: str, model: str, options: IdentifyOptions) -> IdentifyResult:
        """_Models.identify on a free actor ({"path", "error"} when Ray lost it)."""
        result: IdentifyResult = await self.call("identify", path, model, options)
        return result

    async def accept(self, path: str, drafter: str, options: AcceptOptions) -> AcceptResult:
        """_Models.accept on a free actor ({"path", "error"} when Ray lost it)."""
        result: AcceptResult = await self.call("accept", path, drafter, options)
        return result

    async def call(self, method: str, path: str, what: str, options: IdentifyOptions | AcceptOptions) -> Any:
        free = self._start()
        actor = await free.get()
        ref = None
        try:
            ref = getattr(actor, method).remote(path, what, options)
            result = await ref
        except asyncio.CancelledError:
            if ref is not None:
                self.ray.cancel(ref)
            raise
        except self.ray.exceptions.RayError as err:
            result = error_result(path, lost_reason(err))
        finally:
            free.put_nowait(actor)
        result["computed"] = "ray"
        return result
