"""Calls kept in flight ahead of the one awaited, results taken in order: the per-file model
steps (identify, acceptance) on a source that runs several at once (`scan --ray`'s actors,
dataset/ray_models.py) stream as they come and still see them in their order.

    ahead = Ahead(lambda i: source.identify(paths[i], ...), len(paths), source_parallel(source))
    for i in range(len(paths)):
        r = await ahead.result(i)
    ahead.close()                                   # cancels what was started and not taken
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from eagle3_tui.sources.base import Source


def source_parallel(source: Source) -> int:
    """How many calls the source runs at once (1 unless it says: a Ray source's actors)."""
    return max(1, source.parallel)


class Ahead:
    def __init__(self, start: Callable[[int], Awaitable[Any]], count: int, parallel: int) -> None:
        self.start, self.count, self.parallel = start, count, parallel
        self.tasks: dict[int, asyncio.Future] = {}

    async def result(self, i: int) -> Any:
        for j in range(i, min(self.count, i + self.parallel)):
            if j not in self.tasks:
                self.tasks[j] = asyncio.ensure_future(self.start(j))
        return await self.tasks.pop(i)

    def close(self) -> None:
        for task in self.tasks.values():
            task.cancel()
        self.tasks.clear()
