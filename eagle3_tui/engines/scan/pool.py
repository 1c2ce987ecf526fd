"""A small process pool for the scan that knows which item each worker is on, and since when.

A task is a list of items (the scan's: a chunk of files). `fn(shared, items)` runs in a forked
child and yields one result per item, in order; the worker sends the task's results in one message
when it is done (one pickled list per chunk of files: each record sent alone cost the parent 2.5
times the CPU, 0.07 -> 0.18 s over a quick scan of 2,000 small files), and before
each item writes its index and the time into a heartbeat the parent can read (two doubles of
shared memory), so the parent knows at every moment which item a worker is on and since when:

    for item, result in run_tasks(fn, shared, chunks, workers=2, ctx=ctx, cancel=event,
                                  time_limit=60.0, memory_limit=4 << 30):
        ...

result is what fn yielded for item, or:
- TimedOut(seconds): the item ran past `time_limit` (looked at on the wait loop's tick; a pause
  of this process, ctrl+z, starts every clock again). Its worker is stopped (terminate, then
  kill); the other items of its task (those it had done too: their results went with it) go back
  to the queue, and a fresh worker takes over.
- WorkerDied(exitcode): the worker's process ended (the kernel's OOM killer, a segfault in a
  reader) on this item, alone in its task. A worker that dies on an item among others has the item
  run again alone and the task's other items queued again: only an item that kills a worker on its
  own is reported so. The parent waits on the pipes and the processes' sentinels together, so a
  death is seen at once.
- TaskFailed(message): fn raised on the item (the worker lives on and goes on with the rest).

memory_limit: each worker may hold what it held once started (its copy of the parent's heap,
torch) plus this many bytes plus what fn allows for the item at hand (`item_memory`): the data
segment limit (RLIMIT_DATA, which Linux 4.7+ counts every private writable mapping against: malloc,
torch's allocator, torch.load(mmap=True)'s map of a file), so an allocation past it fails inside
the worker (MemoryError, torch's "can't allocate memory") instead of taking the machine.
Cancelling or leaving the loop terminates every worker, and joins it, before the generator
returns; workers also end with the parent (die_with_parent).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import wait
from typing import Any

#: how often the parent looks at the cancel event and the time limit while every worker is busy
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


# ------------------------------------------------------------------------------- memory


def data_bytes() -> int | None:
    """This process's data segment as RLIMIT_DATA counts it (VmData, Linux), None elsewhere."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmData:"):
                    return int(line.split()[1]) << 10
    except (OSError, ValueError, IndexError):
        pass
    return None


class _Memory:
    """A worker's data limit: `base` (what it held once started plus the pool's memory_limit;
    None: no limit), the soft and hard limits it inherited (a user's `ulimit -d` stands), and the
    soft limit set now."""

    base: int | None = None
    soft: int = -1
    hard: int = -1
    now: int | None = None


#: what an item may add is rounded up to this: samples of about one size then cost no system call
_ITEM_STEP = 64 << 20


def _limit_memory(extra: int) -> None:
    """Limit this worker's data to what it holds now plus `extra` bytes (where VmData cannot be
    read, not Linux, nothing is limited)."""
    # lazy: resource is POSIX only (the pool runs on Linux and macOS)
    import resource

    held = data_bytes()
    if held is None:
        return
    _Memory.soft, _Memory.hard = resource.getrlimit(resource.RLIMIT_DATA)
    _Memory.base = held + extra
    item_memory(0)


def item_memory(nbytes: int) -> None:
    """In a worker with a memory limit: allow `nbytes` more than the limit for the item about to
    run (the scan: the file's size, which torch.load(mmap=True) maps: pages of the file, not the
    machine's memory), rounded up to 64 MiB. Elsewhere nothing."""
    if _Memory.base is None:
        return
    soft = _Memory.base + -(-max(0, nbytes) // _ITEM_STEP) * _ITEM_STEP
    if soft == _Memory.now:
        return
    # lazy: resource is POSIX only
    import resource

    _Memory.now = soft
    for bound in (_Memory.soft, _Memory.hard):
        if bound != resource.RLIM_INFINITY:
            soft = min(soft, bound)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, _Memory.hard))


# ------------------------------------------------------------------------------- the workers


class _Failed:
    """In a task's results: fn raised on this item (the message says what)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __reduce__(self):
        return _Failed, (self.text,)


def _results(fn, shared, items: list, beat) -> list:
    """fn's results for `items`, one per item, the heartbeat (index, start) written before each."""
    results: list = []
    while len(results) < len(items):
        try:
            it = iter(fn(shared, items[len(results):]))
            while len(results) < len(items):
                beat[1] = time.monotonic()  # the time first: a reader that sees the new index sees it
                beat[0] = len(results)
                results.append(next(it))
        except StopIteration:
            results.append(_Failed("no result for this item"))
        except Exception as err:  # noqa: BLE001 - reported to the parent, which owns the item
            results.append(_Failed(f"{type(err).__name__}: {str(err)[:200]}"))
    return results


def _serve(conn, fn, shared, beat, initializer, memory_limit) -> None:
    die_with_parent()
    if initializer is not None:
        initializer()
    if memory_limit is not None:
        _limit_memory(memory_limit)
    while True:
        try:
            items = conn.recv()
        except (EOFError, OSError):
            return
        if items is None:
            return
        results = _results(fn, shared, items, beat)
        try:
            conn.send(results)
        except (EOFError, OSError):
            return
        except Exception as err:  # noqa: BLE001 - a result that does not pickle: every item told so
            conn.send([_Failed(f"{type(err).__name__}: {str(err)[:200]}")] * len(items))


class _Worker:
    def __init__(self, ctx, fn, shared, initializer, memory_limit) -> None:
        self.conn, child = ctx.Pipe()
        #: [index of the item it is on, time.monotonic() when it began]: written by the worker
        #: before each item, by the parent when it hands a task
        self.beat = ctx.RawArray("d", 2)
        self.proc = ctx.Process(target=_serve, args=(child, fn, shared, self.beat, initializer, memory_limit),
                                daemon=True)
        self.proc.start()
        child.close()
        self.items: list | None = None  # the task it holds (None: idle)

    def give(self, items: list) -> None:
        self.items = items
        self.beat[1] = time.monotonic()  # the worker is idle: nobody else writes now
        self.beat[0] = 0
        self.conn.send(items)

    def on(self) -> tuple[int, float] | None:
        """(index of the item it is on, since when), None when it is moving on right now (the
        index changed while the time was read)."""
        index = self.beat[0]
        since = self.beat[1]
        return (int(index), since) if self.beat[0] == index else None

    def end(self) -> None:
        """The process ended (terminate, then kill) and joined; its pipe stays readable."""
        if self.proc.is_alive():
            self.proc.terminate()
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)  # still there: stuck in the kernel (a dead NFS server); it ends
            # when its read does, and the scan does not wait for that

    def stop(self) -> None:
        self.end()
        self.conn.close()


class TaskFailed(Exception):
    """fn raised in a worker on this item: the message says what (the worker lives on)."""


class WorkerDied(Exception):
    """The worker's process ended while it held the item, alone (killed, crashed)."""

    def __init__(self, exitcode: int | None) -> None:
        self.exitcode = exitcode
        if exitcode is not None and exitcode < 0:
            how = f"killed by signal {-exitcode}" + (" (out of memory?)" if exitcode == -9 else "")
        else:
            how = f"ended with exit code {exitcode}"
        super().__init__(how)


class TimedOut(Exception):
    """The item ran past the time limit; its worker was stopped."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"took longer than {seconds:g} s")


def _finished(worker: _Worker) -> Iterator[tuple[Any, Any]]:
    """The task's results (the worker sent them: the caller read its pipe ready)."""
    results = worker.conn.recv()
    items, worker.items = worker.items or [], None
    for item, result in zip(items, results):
        yield item, (TaskFailed(result.text) if type(result) is _Failed else result)


class _Pool:
    """The workers of one run_tasks and the tasks not handed out yet: workers started, given
    tasks, their results read, and a worker that died or ran late retired and replaced."""

    def __init__(self, fn, shared, tasks: Iterable[list], workers: int, ctx, initializer, time_limit: float | None,
                 memory_limit: int | None) -> None:
        self.pending: deque[list] = deque(t for t in tasks if t)
        self.live: list[_Worker] = []
        self.workers = workers
        self.time_limit = time_limit
        self._new = (ctx, fn, shared, initializer, memory_limit)

    def start(self) -> None:
        self.live.append(_Worker(*self._new))

    def hand_out(self) -> list[_Worker]:
        """Each idle worker given the next task, while there are tasks: the workers that hold one."""
        for worker in self.live:
            if worker.items is None and self.pending:
                worker.give(self.pending.popleft())
        return [w for w in self.live if w.items is not None]

    def late(self, busy: list[_Worker], now: float,
             resumed: float) -> tuple[tuple[_Worker, tuple[int, float]] | None, float]:
        """(a worker on an item past the time limit, with (the item's index, since when), or None;
        how long to wait before an item could be), each item's clock started no earlier than
        `resumed`."""
        limit = self.time_limit or 0.0
        timeout = _TICK
        for worker in busy:
            at = worker.on()
            if at is None:  # moving on to its next item right now
                continue
            since = max(at[1], resumed)
            if now - since > limit and not worker.conn.poll():  # (a message there is read first)
                return (worker, at), timeout
            timeout = min(timeout, max(0.001, since + limit - now))
        return None, timeout

    def collect(self, busy: list[_Worker], timeout: float) -> Iterator[tuple[Any, Any]]:
        """Wait up to `timeout` for a busy worker's results or any worker's end (the pipes and the
        processes' sentinels together, so a death is seen at once): the results of the tasks done,
        then what retire says of the workers that ended."""
        ready = wait([*(w.conn for w in busy), *(w.proc.sentinel for w in self.live)], timeout=timeout)
        for obj in ready:
            owner = next((w for w in self.live if w.conn is obj or w.proc.sentinel == obj), None)
            if owner is None:  # retired earlier in this round
                continue
            if owner.conn is obj:
                try:
                    yield from _finished(owner)
                    continue
                except (EOFError, OSError):
                    pass
            # its sentinel, or its pipe's end: the process ended
            yield from self.retire(owner)

    def retire(self, worker: _Worker, late: tuple[int, float] | None = None) -> Iterator[tuple[Any, Any]]:
        """The worker died, or was late (on item late[0] since late[1], past the time limit): it is
        ended, the item it was on reported (a death: only when alone in its task, else the item
        runs again alone), its task's other items queued again. A task it finished as it ended
        stands."""
        self.live.remove(worker)
        at = late or worker.on()
        worker.end()
        try:
            if worker.items is not None and worker.conn.poll():
                yield from _finished(worker)
        except (EOFError, OSError):
            pass
        finally:
            worker.conn.close()
        held = worker.items
        if held:
            k = at[0] if at is not None and at[0] < len(held) else 0
            others = held[:k] + held[k + 1:]
            if late is None and len(held) > 1:
                self.pending.extendleft([t for t in (others, held[k:k + 1]) if t])  # the suspect alone, first
            else:
                if others:
                    self.pending.appendleft(others)
                yield held[k], TimedOut(self.time_limit or 0.0) if late else WorkerDied(worker.proc.exitcode)
        if self.pending and len(self.live) < self.workers:
            self.start()

    def stop(self) -> None:
        for worker in self.live:
            worker.stop()


def run_tasks(
    fn: Callable[[Any, list], Iterable[Any]],
    shared: Any,
    tasks: Iterable[list],
    *,
    workers: int,
    ctx,
    cancel: threading.Event,
    initializer: Callable[[], None] | None = None,
    time_limit: float | None = None,
    memory_limit: int | None = None,
) -> Iterator[tuple[Any, Any]]:
    """(item, fn's result | TimedOut | WorkerDied | TaskFailed) for every item of every task, a
    task's together once it is done. `shared` reaches every worker once (a fork copies it)."""
    pool = _Pool(fn, shared, tasks, workers, ctx, initializer, time_limit, memory_limit)
    try:
        for _ in range(min(workers, len(pool.pending))):
            pool.start()
        seen = resumed = time.monotonic()
        while pool.live and not cancel.is_set():
            busy = pool.hand_out()
            if not busy:
                return
            timeout = _TICK
            if time_limit is not None:
                now = time.monotonic()
                if now - seen > max(1.0, time_limit / 2):  # this process was stopped (ctrl+z) or
                    resumed = now  # kept from the loop: every clock starts again
                seen = now
                late, timeout = pool.late(busy, now, resumed)
                if late is not None:
                    yield from pool.retire(*late)
                    continue  # its task's other items are handed out again first
            yield from pool.collect(busy, timeout)
    finally:
        pool.stop()
