"""The SSH session behind SshSource: one connection to the box, the agent started on it, and the
reconnect-and-retry rule (every operation is idempotent: the tool never writes to the box).

Starting the agent costs the login shell and a Python start (~0.3 s here), so it starts in the
background when a first listing over SFTP ends, or at once when anything else needs it.
"""

from __future__ import annotations

import asyncio
import errno as errno_mod
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

import asyncssh

from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.results.host import Runtime
from eagle3_tui.sources.agent_client import AgentClient, AgentLost, AgentUnavailable
from eagle3_tui.sources.base import ConnectionLost, Source, SourceError
from eagle3_tui.sources.hostkeys import HostKeyPrompt
from eagle3_tui.sources.sshconnect import ConnectError, Connector
from eagle3_tui.target import Target

T = TypeVar("T")


class PathError(SourceError):
    """A problem with one remote file or folder (missing, permission denied), not the connection."""


class ConnectionGone(ConnectionLost):
    """The connection dropped and reconnecting did not help (or a listing broke half-way)."""

# Errors that mean the connection (or the agent's channel) is gone, not that a file is bad.
DROPPED = (
    AgentLost,
    asyncssh.DisconnectError,
    asyncssh.ChannelOpenError,
    asyncssh.SFTPConnectionLost,
    asyncssh.SFTPNoConnection,
    ConnectionError,
)


#: the shipped samples code needs this on the box (str.removeprefix, PEP 563 annotations)
MIN_REMOTE_PYTHON = (3, 9)

FILE_PROBLEMS = {errno_mod.ENOENT: "no such file", errno_mod.EACCES: "permission denied"}
KIND_PROBLEMS = {"dir": "is a folder, not a file", "link": "dead symbolic link", "other": "not a regular file"}

class SshSession(Source):
    """The connection to one box and the agent on it: connect, start the agent, reconnect and
    retry an idempotent operation after a drop. SshSource (ssh.py) adds what is done there."""

    #: seconds to wait before each reconnection attempt (the first one is immediate)
    backoff: tuple[float, ...] = (0.0, 1.0, 2.0, 4.0, 8.0)

    def __init__(
        self,
        target: Target,
        *,
        remote_python: str = "python3",
        accept_new_host_key: bool = False,
        confirm_host_key: Callable[[HostKeyPrompt], Awaitable[bool]] | None = None,
        on_status: Callable[[str], None] | None = None,
        ssh_config: str | None = None,
        known_hosts: str | None = None,
    ):
        self.target = target
        self.host = target.host
        self.label = f"{target.user}@{target.host}" if target.user else str(target.host)
        self.remote_python = remote_python
        self._on_status = on_status
        self._said: set[str] = set()
        self._connector = Connector(
            target,
            ssh_config=ssh_config,
            known_hosts=known_hosts,
            accept_new_host_key=accept_new_host_key,
            confirm_host_key=confirm_host_key,
            on_status=on_status,
        )
        self._conn: asyncssh.SSHClientConnection | None = None
        self._agent: AgentClient | None = None
        self._sftp: asyncssh.SFTPClient | None = None
        self._remote_compute = True
        self._connected_once = False
        self._lock = asyncio.Lock()
        #: starts the agent on the current connection; done once it runs or is known unusable
        self._agent_task: asyncio.Task | None = None

    # -- status and connection -------------------------------------------------------------

    def _status(self, message: str, once: bool = False) -> None:
        if once:
            if message in self._said:
                return
            self._said.add(message)
        if self._on_status is not None:
            self._on_status(message)

    @property
    def where(self) -> str:
        return self._connector.where

    @property
    def computed(self) -> str:
        """Where summaries are computed now: "remote" (agent) or "local" (fetched files)."""
        return "remote" if self._agent is not None and self._remote_compute else "local"

    async def connect(self) -> None:
        """Open the connection. The agent starts after the first listing or on first need (agent_ready)."""
        async with self._lock:
            if self._conn is None:
                await self._open()

    async def agent_ready(self) -> None:
        """Wait until the agent runs, or is known not to (then `computed` says "local")."""
        await self.connect()
        try:
            await self._agent_started()
        except DROPPED as err:
            self._forget()
            reason = getattr(err, "reason", None) or str(err) or type(err).__name__
            raise ConnectionGone(f"{self.where}: connection lost while starting the agent ({reason})") from None

    async def _open(self) -> None:
        self._status(f"connecting to {self.target.host}…")
        self._conn = await self._connector.connect()
        self._connected_once = True

    def _kick_agent(self) -> asyncio.Task | None:
        """Start the agent on the current connection unless it is starting or started."""
        if self._agent_task is None and self._conn is not None:
            self._agent_task = asyncio.create_task(self._start_agent(self._conn))
            # a failure is read by whoever waits for the agent; nobody waiting is no error
            self._agent_task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return self._agent_task

    async def _agent_started(self) -> None:
        """Start the agent if needed and wait for it; a drop while it starts raises DROPPED."""
        task = self._kick_agent()
        if task is None:
            return
        await asyncio.wait([task])  # unlike awaiting it, never cancels the start for all waiters
        if task.cancelled():  # dropped (_forget) or closed meanwhile
            raise AgentLost("connection lost")
        if (error := task.exception()) is not None:
            raise error

    async def _start_agent(self, conn: asyncssh.SSHClientConnection) -> None:
        self._status("starting agent…")
        try:
            agent = await AgentClient.start(conn, self.remote_python, torch_gate.trusted())
        except AgentUnavailable as err:
            self._status(f"{err} on {self.target.host}: listing over SFTP, computing locally", once=True)
            return
        if conn is not self._conn:  # the connection was dropped or closed meanwhile
            await agent.close()
            raise AgentLost("connection lost")
        self._agent = agent
        torch = agent.hello.get("torch")
        python = agent.hello.get("python", "0")
        if _version(python) < MIN_REMOTE_PYTHON:
            self._remote_compute = False
            needed = ".".join(map(str, MIN_REMOTE_PYTHON))
            self._status(
                f"remote Python {python} on {self.target.host} is older than {needed}: computing locally", once=True
            )
        elif not torch:
            self._remote_compute = False
            self._status(f"no torch on {self.target.host}: computing locally", once=True)
        elif self._remote_compute:
            self._status(f"connected (agent: python {python}, torch {torch})", once=True)
        else:
            self._status("connected (agent lists; computing locally)", once=True)
        if self._remote_compute and torch:  # computing there needs its torch (said above otherwise)
            self._decide_pickles(torch)

    def _decide_pickles(self, torch: str) -> None:
        """Once per agent, from its hello: whether the box's torch may unpickle (the agent's own
        gate refuses each file; this is the one line the user sees first)."""
        line = torch_gate.problem(torch, *torch_gate.BOX)
        self.pickle_problem = line
        if line is not None and torch_gate.trusted():
            self._status(f"the box's torch {torch} is below 2.10 ({torch_gate.CVES}): --trust-data loads "
                         ".pt files there anyway, unsafely", once=True)
        elif line is not None:
            self._status(line, once=True)

    @property
    def runtime_known(self) -> bool:
        return self._agent is not None or (self._agent_task is not None and self._agent_task.done())

    def runtime(self) -> Runtime:
        """Which Python and torch computed this source's results (the agent's, or this machine's)."""
        if self.computed == "local" or self._agent is None:
            return super().runtime()
        hello = self._agent.hello
        return cast(Runtime, torch_gate.runtime("remote", hello.get("python"), hello.get("executable"),
                                                hello.get("torch")))

    def _forget(self) -> None:
        """Drop every handle on a connection that is gone; the next call reconnects."""
        conn, self._conn, self._agent, self._sftp = self._conn, None, None, None
        task, self._agent_task = self._agent_task, None
        if task is not None:
            task.cancel()
        if conn is not None:
            conn.abort()

    async def close(self) -> None:
        async with self._lock:
            if self._agent_task is not None:
                self._agent_task.cancel()
                self._agent_task = None
            if self._agent is not None:
                await self._agent.close()
            if self._sftp is not None:
                self._sftp.exit()
            if self._conn is not None:
                self._conn.close()
                await self._conn.wait_closed()
            self._conn, self._agent, self._sftp = None, None, None

    async def _ensure(self, agent: bool = True) -> None:
        """Connect if never connected, and (with `agent`) wait for the agent's start; raise
        AgentLost if the connection or agent died since."""
        if self._conn is None:
            async with self._lock:
                if self._conn is None:
                    await self._open()
        elif self._conn.is_closed() or (self._agent is not None and self._agent.lost):
            raise AgentLost("connection lost")
        if agent:
            await self._agent_started()

    async def _sftp_client(self) -> asyncssh.SFTPClient:
        if self._sftp is None:
            assert self._conn is not None
            # surrogateescape: names that are not UTF-8 round-trip to the same bytes
            self._sftp = await self._conn.start_sftp_client(path_errors="surrogateescape")
        return self._sftp

    async def _after_drop(self, tries: int, what: str) -> int:
        """Wait before reconnection attempt number tries+1, or give up."""
        tries += 1
        if tries > len(self.backoff):
            err = ConnectionGone(f"{self.where}: connection lost while {what}; gave up after {len(self.backoff)} reconnects")
            err.gave_up = True
            raise err
        self._status(f"connection lost, reconnecting ({tries}/{len(self.backoff)})…")
        await asyncio.sleep(self.backoff[tries - 1])
        return tries

    def _retryable(self, err: ConnectError) -> bool:
        # Refused or timed out on first contact is the user's answer; after a drop it may pass.
        return err.retryable and self._connected_once

    async def _retrying(self, what: str, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run `attempt` on a live connection; after a drop, reconnect with backoff and rerun it."""
        tries = 0
        while True:
            try:
                await self._ensure()
                return await attempt()
            except DROPPED:
                self._forget()
            except ConnectError as err:
                if not self._retryable(err):
                    raise
            tries = await self._after_drop(tries, what)


def _version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(".")[:2])
    except ValueError:
        return (0,)
