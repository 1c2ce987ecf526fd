"""Local side of the remote agent: start it over an SSH connection and talk JSON lines to it.

The remote command line is a constant bootstrap: the agent program (sources/agent.py) and the
source of the modules it runs (sources/shipping.py) travel over stdin, and so do all file names.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import shlex
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any, TypedDict

from eagle3_tui.engines.results.scan import ScanProgressData
from eagle3_tui.sources.agent import HELLO
from eagle3_tui.sources.shipping import shipped_modules

# Reads a length line, then exactly that many bytes of program, from stdin; the rest of stdin
# stays for the protocol.
BOOTSTRAP = (
    "import sys;b=sys.stdin.buffer;"
    "exec(compile(b.read(int(b.readline())),'<eagle3-agent>','exec'))"
)

#: exit status of a shell that could not find the command
COMMAND_NOT_FOUND = 127


class AgentUnavailable(Exception):
    """The remote side cannot run the agent (no Python there, or it failed to start)."""


class Hello(TypedDict, total=False):
    """The agent's first line (sources/agent.py main): what runs on the box."""

    protocol: int
    python: str
    executable: str
    torch: str | None
    tokenizers: str | None
    pid: int


class Reply(TypedDict, total=False):
    """One JSON line of the agent (sources/agent.py), answering request "id"."""

    id: int
    result: dict[str, Any]  # a parsed JSON line: an engine's result, its TypedDict by op (ssh.py _remote)
    entry: list[Any]  # stat: Entry's fields
    page: list[Any]  # ls: entries' fields; scan: records
    progress: ScanProgressData  # scan
    done: bool  # the last reply of a stream
    oserror: list[Any]  # [errno, message]: the box's OSError
    error: str
    unusable: str  # the box cannot compute (no torch, too old): computed here instead
    ray_error: str  # scan --ray
    drafter_error: str  # scan --drafter


class AgentLost(Exception):
    """The agent's channel closed while a request was waiting (connection dropped or agent died)."""


class AgentError(Exception):
    """The agent answered a request with a failure."""

    def __init__(self, reply: Reply):
        self.reply = reply
        if "oserror" in reply:
            message = str(reply["oserror"][1])
        else:
            message = str(reply.get("unusable") or reply.get("error"))
        super().__init__(message)

    @property
    def errno(self) -> int | None:
        return self.reply["oserror"][0] if "oserror" in self.reply else None

    @property
    def unusable(self) -> bool:
        return "unusable" in self.reply


@functools.cache
def agent_program(trust_data: bool = False) -> bytes:
    """The bytes sent first on the agent's stdin: a length line, then the program (trust_data:
    the box's torch unpickles even below 2.10, --trust-data)."""
    source = resources.files("eagle3_tui.sources").joinpath("agent.py").read_text("utf-8")
    program = f"{source}\n\nmain({shipped_modules()!r}, trust_data={bool(trust_data)!r})\n".encode()
    return f"{len(program)}\n".encode() + program


def agent_command(remote_python: str) -> str:
    # remote_python is the user's own setting and may be a shell fragment ("conda run -n x python").
    return f"{remote_python} -c {shlex.quote(BOOTSTRAP)}"


class AgentClient:
    """One running agent. Requests may overlap; replies are routed by id."""

    def __init__(self, process, hello: Hello, stderr_drain: asyncio.Task):
        self._process = process
        self._stderr_drain = stderr_drain
        self.hello = hello
        self._ids = itertools.count(1)
        self._queues: dict[int, asyncio.Queue[Reply | None]] = {}
        self.lost = False
        #: bytes of replies read so far (what crossed the network for this agent's answers)
        self.received = 0
        self._reader = asyncio.create_task(self._read_replies())

    @classmethod
    async def start(cls, conn, remote_python: str, trust_data: bool = False) -> AgentClient:
        process = await conn.create_process(agent_command(remote_python), encoding=None)
        process.stdin.write(agent_program(trust_data))
        stderr_tail: list[bytes] = []
        drain = asyncio.create_task(_keep_tail(process.stderr, stderr_tail))
        try:
            while True:
                line = await process.stdout.readline()
                if not line:
                    break
                if line.startswith(HELLO.encode() + b" "):
                    hello = json.loads(line[len(HELLO) + 1 :])
                    return cls(process, hello, drain)
                # anything before the hello line is a login script talking: skip it
        except Exception:
            process.close()
            raise
        await drain
        await process.wait_closed()
        status = process.exit_status
        said = b" ".join(stderr_tail).decode("utf-8", "replace").strip()
        if status == COMMAND_NOT_FOUND:
            raise AgentUnavailable(f"remote Python {remote_python!r} not found")
        raise AgentUnavailable(
            f"remote Python {remote_python!r} could not start the agent"
            + (f": {said.splitlines()[-1]}" if said else f" (exit status {status})")
        )

    async def _read_replies(self) -> None:
        stdout = self._process.stdout
        try:
            while True:
                line = await stdout.readline()
                if not line:
                    break
                self.received += len(line)
                try:
                    reply = json.loads(line)
                except ValueError:
                    continue
                queue = self._queues.get(reply.get("id"))
                if queue is not None:
                    queue.put_nowait(reply)
        except Exception:
            pass
        finally:
            self.lost = True
            for queue in self._queues.values():
                queue.put_nowait(None)

    def _send(self, request: dict[str, object]) -> None:
        if self.lost:
            raise AgentLost("agent channel closed")
        try:
            self._process.stdin.write(json.dumps(request).encode() + b"\n")
        except Exception as exc:
            self.lost = True
            raise AgentLost(str(exc)) from exc

    def _open(self, request: dict[str, object]) -> tuple[int, asyncio.Queue[Reply | None]]:
        rid = next(self._ids)
        queue: asyncio.Queue[Reply | None] = asyncio.Queue()
        self._queues[rid] = queue
        try:
            self._send({"id": rid, **request})
        except AgentLost:
            del self._queues[rid]
            raise
        return rid, queue

    @staticmethod
    def _check(reply: Reply | None) -> Reply:
        if reply is None:
            raise AgentLost("agent channel closed")
        if "oserror" in reply or "error" in reply or "unusable" in reply:
            raise AgentError(reply)
        return reply

    def _finish(self, rid: int, answered: bool) -> None:
        self._queues.pop(rid, None)
        if not answered and not self.lost:
            try:  # we stopped waiting (cancelled): let the agent stop working too
                self._send({"op": "cancel", "target": rid})
            except AgentLost:
                pass

    async def call(self, op: str, **args: object) -> Reply:
        """One request, one reply."""
        rid, queue = self._open({"op": op, **args})
        answered = False
        try:
            reply = await queue.get()
            answered = True
        finally:
            self._finish(rid, answered)
        return self._check(reply)

    async def stream(self, op: str, **args: object) -> AsyncIterator[Reply]:
        """One request, replies until one says done. Closing the iterator early cancels it."""
        rid, queue = self._open({"op": op, **args})
        done = False
        try:
            while not done:
                reply = await queue.get()
                done = reply is None or "page" not in reply or bool(reply.get("done"))
                yield self._check(reply)
        finally:
            self._finish(rid, done)

    async def close(self) -> None:
        self._reader.cancel()
        self._stderr_drain.cancel()
        try:
            self._process.stdin.write_eof()
        except Exception:
            pass
        self._process.close()


async def _keep_tail(stream, tail: list[bytes], keep: int = 20) -> None:
    try:
        while True:
            line = await stream.readline()
            if not line:
                return
            tail.append(line)
            del tail[:-keep]
    except Exception:
        return
