"""The per-file work of a scan as Ray tasks on an existing cluster: scan_tree's executor
(records.py), for `scan --ray` here (dataset/ray_runner.py) and on an SSH box's own cluster
(`scan box:/data --ray`, sources/agent.py). Ray is imported only when such a scan starts.

Only the executor changes: the listing, the cached stubs, the records (scan_file, the same
code), the record cache and the findings are the local scan's own.

- Files go in batches (one task each), at most IN_FLIGHT_PER_CPU batches per cluster CPU in
  flight; records come back as each batch finishes (ray.wait), in no set order.
- A batch whose worker or node dies is retried elsewhere (TASK_RETRIES times, Ray's
  max_retries); when it still fails, each of its files gets an error record with the reason and
  "lost": true (left out of the record cache: the next scan reads them again). No file is
  dropped.
- Cancelling (ctrl+c, the view closed) submits no more batches and drops those still out; they
  are not ray.cancel()ed (see run()).
- Data locality: by default the tree is on a file system every node sees (NFS, Lustre, a
  bucket mount): the driver lists it and any node reads any batch. local_roots=True: each node
  holds its own files under the same root; each node lists its own tree and reads only its own
  files (node affinity, not soft: a batch whose node left is reported, never read elsewhere).
- The workers run the driver's eagle3_tui (shipped as a Ray runtime_env py_module), so the
  records are those of this code, whatever the nodes have installed; they need torch.
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from typing import Any, TypedDict, cast

import eagle3_tui
from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.results.errors import error_result
from eagle3_tui.engines.results.scan import ScanRecord
from eagle3_tui.engines.scan.file_record import scan_file
from eagle3_tui.engines.scan.local_run import one_torch_thread
from eagle3_tui.engines.scan.options import CHUNK_FILES
from eagle3_tui.engines.scan.walk import Listed, file_index, walk

INSTALL_HINT = 'Ray is not installed here: pip install "eagle3-tui[ray]"'
#: retries of a batch whose worker process or node died (Ray's max_retries)
TASK_RETRIES = 3
#: batches queued per CPU of the cluster: enough to keep every CPU busy between two waits
IN_FLIGHT_PER_CPU = 4
#: files a batch holds at most (a batch is a task: fewer, bigger tasks amortise Ray's overhead)
MAX_BATCH = 256
#: seconds to wait for the head of an explicit --ray HOST:PORT to answer
CONNECT_SECONDS = 5
#: seconds between two looks at the cancel flag while waiting for batches
WAIT_SECONDS = 0.2


class RayUnavailable(Exception):
    """No Ray here, or no cluster at the address: one line for the user."""


class RayNotInstalled(RayUnavailable):
    """Ray cannot be imported (the extra is not installed)."""


def import_ray():
    # Ray's auto-init would answer a call made after the connection is gone (ray.get, ray.remote)
    # by starting a new local cluster on this machine, writing ~/.ray/auth_token, which then turns
    # token auth on for every later `ray start` here. A lost cluster must stay an error.
    os.environ["RAY_ENABLE_AUTO_CONNECT"] = "0"
    try:
        # lazy: ray (optional or heavy): loaded only when used
        import ray
    except ImportError:
        raise RayNotInstalled(INSTALL_HINT) from None
    return ray


def address_problem(address: str | None) -> str | None:
    """One line when --ray's ADDRESS cannot be a cluster's head (checked before Ray is imported,
    nothing is tried): HOST:PORT with a port in 1-65535, "auto", or a URL (ray://...)."""
    if not address or address == "auto" or "://" in address:
        return None
    host, colon, port = address.rpartition(":")
    if not colon or not port.isdigit():
        return f"--ray {address}: expected HOST:PORT of the cluster's head, or auto"
    if not 1 <= int(port) <= 65535:
        return f"--ray {address}: {port} is not a port (1-65535)"
    return None


def connect(address: str | None, package: str | None = None, *, quiet: bool = False):
    """The ray module, connected to the cluster at `address` ("auto" or None: the one this
    machine belongs to, RAY_ADDRESS first). A cluster that cannot be reached is RayUnavailable,
    within CONNECT_SECONDS for an explicit HOST:PORT. quiet: what Ray's C++ side writes on
    stderr while connecting (gcs_client retries) goes nowhere (the CLI, the agent: not the TUI,
    whose screen is that file)."""
    if (problem := address_problem(address)) is not None:
        raise RayUnavailable(problem)
    ray = import_ray()
    if ray.is_initialized():
        return ray
    deadline = time.monotonic() + CONNECT_SECONDS
    if address and address != "auto" and "://" not in address:
        # Ray itself retries an address that does not answer for minutes, and one where
        # something else answers for 20 s (printing a warning a second): ask its head first
        _answers(address, CONNECT_SECONDS)
        _head_answers(address, deadline)
    if package is None:  # the agent on an SSH box passes the shipped modules, written out

        package = os.path.dirname(os.path.abspath(eagle3_tui.__file__))
    try:
        with _stderr_dropped(quiet):
            ray.init(address=address or "auto", logging_level="ERROR", log_to_driver=False,
                     runtime_env={"py_modules": [package], "excludes": ["__pycache__"]})
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise RayUnavailable(f"--ray {address or 'auto'}: no Ray cluster there ({str(err).splitlines()[0]})") from None
    _quiet(ray)
    return ray


#: asks the GCS at argv[1] for the cluster's id: exit 0 (a Ray head), 1 with the reason on stdout, 3 (no such client)
_PROBE = """import sys
try:
    from ray._raylet import GcsClient
except ImportError:
    sys.exit(3)
try:
    GcsClient(address=sys.argv[1]).cluster_id
except Exception as err:
    print((str(err).splitlines() or [type(err).__name__])[0])
    sys.exit(1)
"""


def _head_answers(address: str, deadline: float) -> None:
    """A Ray head (its GCS) answers at `address` before `deadline`, or RayUnavailable. Asked in
    a child process: on a port where something else listens Ray's client waits 30 s and more,
    writing warnings on file descriptor 2; the child is killed at the deadline, its noise kept."""
    try:
        asked = subprocess.run([sys.executable, "-c", _PROBE, address], capture_output=True, stdin=subprocess.DEVNULL,
                               timeout=max(0.5, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise RayUnavailable(f"--ray {address}: no Ray cluster there (no Ray head answered within {CONNECT_SECONDS} s)") from None
    except OSError:
        return  # no child process here: ray.init alone decides
    if asked.returncode == 1:
        why = asked.stdout.decode("utf-8", "replace").strip() or "no answer"
        raise RayUnavailable(f"--ray {address}: no Ray cluster there ({why})")


class _stderr_dropped:
    """File descriptor 2 pointed at /dev/null for a while (Ray's C++ logs bypass sys.stderr)."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.saved: int | None = None

    def __enter__(self) -> None:
        if self.on:
            try:
                sys.stderr.flush()
                self.saved = os.dup(2)
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 2)
                os.close(null)
            except (OSError, ValueError, AttributeError):
                self.saved = None

    def __exit__(self, *exc) -> None:
        if self.saved is not None:
            os.dup2(self.saved, 2)
            os.close(self.saved)


def _quiet(ray) -> None:
    """Ray's driver prints the cluster's error events ("(raylet) Task failed ... will be retried")
    on stdout from a thread of its own: in the middle of `scan --json`'s records, or over the
    TUI's screen. What they say reaches the user as records ("lost") and retries need no word;
    Ray has no public switch, so its module flag (tests/ray checks stdout stays JSON)."""
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    if worker is not None and hasattr(worker, "_worker_logs_enabled"):
        worker._worker_logs_enabled = False


def _answers(address: str, timeout: float) -> None:
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout).close()
    except ValueError:
        raise RayUnavailable(f"--ray {address}: expected HOST:PORT of the cluster's head, or auto") from None
    except OSError as err:
        raise RayUnavailable(f"--ray {address}: no Ray cluster there ({err.strerror or err})") from None


def batch_size(files: int, cpus: int) -> int:
    """Files per task: IN_FLIGHT_PER_CPU tasks per CPU over the whole scan, within
    [CHUNK_FILES, MAX_BATCH] (small batches cost Ray's per-task overhead, big ones the balance)."""
    return max(CHUNK_FILES, min(MAX_BATCH, -(-files // max(1, cpus * IN_FLIGHT_PER_CPU))))


# ----------------------------------------------------------------------- what runs on the nodes


def _read_batch(root: str, batch: list, full: bool, rows: int, drafter, vocab_mapping,
                trust_data: bool = False) -> list[ScanRecord]:
    """One task: the records of a batch of files, by scan_file, as the local pool reads them.
    The node's own torch passes the gate (engines/read/torch_gate.py) or refuses each pickle;
    trust_data: the driver's --trust-data."""
    torch_gate.trust_data(trust_data)

    # rows: a count, or (rows, byte budget[, pair]) as scan_tree hands them to its executor
    more_: list[Any]
    rows, *more_ = rows if isinstance(rows, (tuple, list)) else (rows,)
    more = dict(zip(("budget", "pair"), more_))
    with one_torch_thread():
        return [scan_file(root, rel, size, mtime, full=full, rows=rows, drafter=drafter,
                          vocab_mapping=vocab_mapping, **more)
                for rel, size, mtime in batch]


def _list_here(root: str) -> list | None:
    """One task per node (--ray-local-roots): the files of the node's own tree, None without one."""
    if not os.path.isdir(root):
        return None
    return list(walk(root))


# ----------------------------------------------------------------------- the executor


def lost_record(rel: str, size: int | None, mtime: float | None, reason: str) -> ScanRecord:
    """The record of a file whose batch did not come back: where it is, and why."""
    # error_result's {"path", "error"} with the record's place: a ScanRecord of a file that cannot be used
    return cast(ScanRecord, error_result(rel, reason, index=file_index(rel.rsplit("/", 1)[-1]),
                                         shard=rel.rsplit("/", 1)[0] if "/" in rel else "", size=size, mtime=mtime,
                                         lost=True))


def lost_reason(err: BaseException) -> str:
    ex = __import__("ray").exceptions
    why = {
        ex.NodeDiedError: "its node left the cluster",
        ex.WorkerCrashedError: "its worker process died",
        ex.TaskUnschedulableError: "no node of the cluster can run it (its node left?)",
        ex.TaskCancelledError: "the task was cancelled",
        ex.ObjectLostError: "its result was lost with a node",
    }
    for kind, text in why.items():
        if isinstance(err, kind):
            return f"not read on the Ray cluster: {text} (after {TASK_RETRIES} retries)"
    first = str(err).strip().splitlines()[-1][:200] if str(err).strip() else type(err).__name__
    return f"not read on the Ray cluster: {first}"


class TaskOptions(TypedDict, total=False):
    """The Ray task options a batch (or a node's listing) is sent with (RayScan._task_options)."""

    num_cpus: int
    max_retries: int
    scheduling_strategy: Any  # ray's NodeAffinitySchedulingStrategy: ray is imported only when used


class RayScan:
    """scan_tree's executor on a connected Ray cluster (see the module's docstring)."""

    def __init__(self, ray, *, local_roots: bool = False, batch: int | None = None) -> None:
        self.ray = ray
        self.local_roots = local_roots
        self.batch = batch
        self.node_of: dict[str, str] = {}  # rel -> node id (local_roots)

        self.trust_data = torch_gate.trusted()  # --trust-data travels with every task
        self.read = ray.remote(_read_batch)  # .options() once per task: Ray's wrapper takes them once

    def cpus(self) -> int:
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def workers(self, requested: int | None, files: int) -> int:
        batches = -(-files // batch_size(files, self.cpus()))
        return max(1, min(requested or self.cpus(), self.cpus(), batches))

    def _task_options(self, node: str | None) -> TaskOptions:
        """One CPU, retried on a lost worker or node; pinned to `node` (not soft) when given."""
        options: TaskOptions = {"num_cpus": 1, "max_retries": TASK_RETRIES}
        if node is not None:
            # lazy: ray (optional or heavy): loaded only when used
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id=node, soft=False)
        return options

    def walk(self, root: str, cancel: threading.Event) -> Iterator[Listed]:
        if not self.local_roots:  # a shared file system: the driver sees the tree the nodes read
            yield from walk(root, cancel)
            return
        nodes = [n["NodeID"] for n in self.ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU")]
        lister = self.ray.remote(_list_here)
        listings = [(node, lister.options(**self._task_options(node)).remote(root)) for node in nodes]
        found = False
        for node, ref in listings:
            if cancel.is_set():
                return
            try:
                listing = self.ray.get(ref)
            except self.ray.exceptions.RayError:
                continue  # the node went while listing: its files are not part of this scan
            if listing is None:
                continue
            found = True
            for item in listing:
                if item[0] not in self.node_of:  # a path on two nodes is read once, on the first
                    self.node_of[item[0]] = node
                    yield item[0], item[1], item[2], item[3]  # a list when Ray sent it
        if not found:
            raise FileNotFoundError(errno.ENOENT, "on no node of the Ray cluster", root)

    def run(self, root, todo, full, rows, workers, cancel, drafter=None, vocab_mapping=None) -> Iterator[ScanRecord]:
        size = self.batch or batch_size(len(todo), self.cpus())
        queue = deque(self._batches(todo, size))
        window = max(1, workers) * IN_FLIGHT_PER_CPU
        pending: dict[Any, list] = {}
        while queue or pending:
            while queue and len(pending) < window:
                node, batch = queue.popleft()
                task = self.read.options(**self._task_options(node))
                pending[task.remote(root, batch, full, rows, drafter, vocab_mapping, self.trust_data)] = batch
            ready, _ = self.ray.wait(list(pending), num_returns=1, timeout=WAIT_SECONDS)
            if cancel.is_set():
                # the batches still out are dropped with `pending`, not ray.cancel()ed (nor when the
                # caller stops early): cancelling one whose reply is on its way aborts this process
                # on a Ray race ("Tried to complete task that was not pending", ray-project/ray#54738),
                # a CLI's report or the TUI's screen with it. They end with their few files, or when
                # this driver leaves the cluster, as Ray ends what a departed owner left running.
                return
            if ready:
                ready, _ = self.ray.wait(list(pending), num_returns=len(pending), timeout=0)
            for ref in ready:
                yield from self._records(ref, pending.pop(ref))

    def _batches(self, todo: list, size: int) -> Iterator[tuple[str | None, list]]:
        if not self.local_roots:
            for i in range(0, len(todo), size):
                yield None, todo[i : i + size]
            return
        per_node: dict[str, list] = {}
        for item in todo:
            per_node.setdefault(self.node_of[item[0]], []).append(item)
        for node, items in per_node.items():
            for i in range(0, len(items), size):
                yield node, items[i : i + size]

    def _records(self, ref, batch: list) -> list[ScanRecord]:
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.RayError as err:
            reason = lost_reason(err)
            return [lost_record(rel, size, mtime, reason) for rel, size, mtime in batch]


