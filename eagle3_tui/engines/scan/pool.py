"""A small process pool for the scan that knows which task each worker holds.

multiprocessing.Pool replaces a worker that dies (the kernel's OOM killer, a segfault in a
reader) but loses the task it held, and `imap_unordered` then waits for it forever. Here each
worker has its own pipe and the parent waits on the pipes and the processes' sentinels together,
so a death is seen at once, with the task that caused it: the caller decides what to do with it
(the scan retries a chunk file by file and reports the file that kills a worker alone).

    for task, result in run_tasks(fn, tasks, workers=2, cancel=event, on_death=died):
        ...

`fn(task)` runs in a forked child (its result must pickle). When a worker dies holding a task,
`retry(task)` gives the tasks to run instead; when it gives none, the task comes back as
(task, WorkerDied(exitcode)). When fn raises, (task, TaskFailed(message)). Cancelling or leaving the loop
terminates every worker, and joins it, before the generator returns.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import wait
from typing import Any

#: how often the parent looks at the cancel event while every worker is busy
_TICK = 0.2


def die_with_parent(tick: float = _TICK) -> None:
    """End this process soon after its parent does (a thread polls getppid: the parent's exit,
    however it came, SIGKILL too, re-parents us). A forked worker also holds copies of its
    siblings' pipe ends, so without this two orphans keep each other waiting for ever (issue 34)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(tick)
        os._exit(1)

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


def _serve(conn, fn, initializer) -> None:
    die_with_parent()
    if initializer is not None:
        initializer()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        try:
            conn.send((True, fn(task)))
        except Exception as err:  # noqa: BLE001 - reported to the parent, which owns the task
            conn.send((False, f"{type(err).__name__}: {str(err)[:200]}"))


class _Worker:
    def __init__(self, ctx, fn, initializer) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, fn, initializer), daemon=True)
        self.proc.start()
        child.close()
        self.task: Any = None

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.terminate()
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


class TaskFailed(Exception):
    """fn raised in a worker: the message says what (the worker itself lives on)."""


class WorkerDied(Exception):
    """The worker's process ended while it held the task (killed, crashed)."""

    def __init__(self, exitcode: int | None) -> None:
        self.exitcode = exitcode
        if exitcode is not None and exitcode < 0:
            how = f"killed by signal {-exitcode}" + (" (out of memory?)" if exitcode == -9 else "")
        else:
            how = f"ended with exit code {exitcode}"
        super().__init__(how)


def run_tasks(
    fn: Callable[[Any], Any],
    tasks: Iterable[Any],
    *,
    workers: int,
    ctx,
    cancel: threading.Event,
    retry: Callable[[Any], Iterable[Any]],
    initializer: Callable[[], None] | None = None,
) -> Iterator[tuple[Any, Any]]:
    """(task, fn(task) | TaskFailed | WorkerDied) for every task, in the order they finish."""
    pending = deque(tasks)
    idle: list[_Worker] = []
    busy: dict[Any, _Worker] = {}  # conn -> worker

    def give(worker: _Worker) -> None:
        worker.task = pending.popleft()
        worker.conn.send(worker.task)
        busy[worker.conn] = worker

    try:
        for _ in range(min(workers, len(pending))):
            idle.append(_Worker(ctx, fn, initializer))
        while pending or busy:
            while pending and idle:
                give(idle.pop())
            if cancel.is_set():
                return
            ready = wait([*busy, *(w.proc.sentinel for w in busy.values())], timeout=_TICK)
            dead: list[_Worker] = []
            for obj in ready:
                worker = busy.get(obj)
                if worker is None:  # a sentinel: handled with the conn below, if still busy
                    dead.extend(w for w in busy.values() if w.proc.sentinel == obj)
                    continue
                try:
                    ok, result = worker.conn.recv()
                except (EOFError, OSError):
                    dead.append(worker)
                    continue
                del busy[worker.conn]
                idle.append(worker)
                task, worker.task = worker.task, None
                yield task, (result if ok else TaskFailed(result))
            for worker in dict.fromkeys(dead):
                if busy.pop(worker.conn, None) is None:
                    continue
                worker.proc.join(5)
                instead = list(retry(worker.task))
                pending.extendleft(reversed(instead))
                worker.stop()
                if not instead:
                    yield worker.task, WorkerDied(worker.proc.exitcode)
                if pending:
                    idle.append(_Worker(ctx, fn, initializer))
    finally:
        for worker in [*idle, *busy.values()]:
            worker.stop()
