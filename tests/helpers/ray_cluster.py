"""A local Ray cluster on loopback (the `scan --ray` tests and bench/bench_ray.py): nodes of one
CPU each, started by `ray start --block` in process groups of their own and stopped by
signalling those groups, never by `ray stop`, which would stop every Ray of the machine. Ray's
session files go to a temp dir of their own.

    with local_cluster(workers=1) as cluster:   # a head and one worker node
        cluster.address                          # "127.0.0.1:PORT"
        node = cluster.add_worker()              # one more; cluster.kill(node) takes it away
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

#: seconds the nodes get to end on SIGTERM when the cluster stops, before SIGKILL
STOP_GRACE_SECONDS = 2.0
#: seconds a node may take to join (2 shared cores: ray start alone takes ~5 s, a minute under load)
JOIN_SECONDS = 240


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    address: str
    temp: str
    nodes: list[subprocess.Popen] = field(default_factory=list)
    killed: set[int] = field(default_factory=set)  # pids of the nodes taken away on purpose

    def start_node(self, *args: str) -> subprocess.Popen:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "RAY_USAGE_STATS_ENABLED": "0",
               # explicit, so a ~/.ray/auth_token left by another Ray on this machine never turns
               # token auth on for this loopback cluster (its drivers connect by address, tokenless)
               "RAY_AUTH_MODE": "disabled"}
        log = open(os.path.join(self.temp, f"node{len(self.nodes)}.log"), "wb")  # noqa: SIM115 - kept for the node
        # every port of the node its own: Ray's defaults (52365, 10001, ...) are one per machine,
        # and a second cluster on them (a benchmark's, another run's) dies at start
        ports = [f"--{name}={free_port()}" for name in _PORTS]
        proc = subprocess.Popen(["ray", "start", "--num-cpus", "1", "--block", "--disable-usage-stats", *ports, *args],
                                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.nodes.append(proc)
        return proc

    def add_worker(self) -> subprocess.Popen:
        before = self.alive()
        proc = self.start_node("--address", self.address, "--node-ip-address", "127.0.0.1")
        self.wait_for(lambda: self.alive() > before, f"a worker node did not join {self.address}")
        return proc

    def alive(self) -> int:
        out = subprocess.run([sys.executable, "-c", _ALIVE, self.address], check=False, capture_output=True, text=True,
                             timeout=JOIN_SECONDS)
        return int(out.stdout.strip().splitlines()[0] if out.stdout.strip() else 0)

    def wait_for(self, ok, what: str) -> None:
        deadline = time.monotonic() + JOIN_SECONDS
        while not ok():
            dead = [i for i, p in enumerate(self.nodes) if p.poll() is not None and p.pid not in self.killed]
            if dead or time.monotonic() > deadline:
                log = Path(self.temp, f"node{dead[0]}.log").read_text(errors="replace")[-2000:] if dead else ""
                raise RuntimeError(f"{what}{': a node exited' if dead else ''}\n{log}")
            time.sleep(1)

    def kill(self, proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
        """The node and every process it started (its own process group)."""
        self.killed.add(proc.pid)
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)

    def stop(self) -> None:
        """Every node's process group: SIGTERM, STOP_GRACE_SECONDS for all of them together, then
        SIGKILL. `ray start`'s own shutdown waits ~15 s on its helpers: nothing here needs that."""
        live = [proc for proc in reversed(self.nodes) if proc.pid not in self.killed]
        for proc in live:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for proc in live:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        for proc in self.nodes:  # Ray's helpers outlive `ray start`: the rest of each group goes
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=15)
        shutil.rmtree(self.temp, ignore_errors=True)


_PORTS = ("dashboard-agent-listen-port", "dashboard-agent-grpc-port", "metrics-export-port", "runtime-env-agent-port",
          "node-manager-port", "object-manager-port")

_ALIVE = """
import sys, ray
ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
print(sum(1 for n in ray.nodes() if n["Alive"]))
"""


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


@contextlib.contextmanager
def local_cluster(workers: int = 1):
    temp = tempfile.mkdtemp(prefix="e3ray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    port = free_port()
    cluster = Cluster(f"127.0.0.1:{port}", temp)
    try:
        cluster.start_node("--head", "--port", str(port), "--temp-dir", os.path.join(temp, "s"),
                           "--include-dashboard", "false", "--node-ip-address", "127.0.0.1")
        cluster.wait_for(lambda: _answers(port), f"the Ray head did not start on {cluster.address}")
        cluster.wait_for(lambda: cluster.alive() >= 1, f"the Ray head did not start on {cluster.address}")
        for _ in range(workers):
            cluster.add_worker()
        yield cluster
    finally:
        cluster.stop()
