"""The server half of tests/helpers/warm_cli.py: one interpreter per test worker that has imported
torch, numpy and transformers once, and forks a child for each `python -m MODULE ...` or
`python -c CODE ...` run. The child takes the run's stdin/stdout/stderr (sent over the socket),
its cwd, environment and memory limit, then leaves the server's frames and runs the command at
the top level of this script and ends as Python ends a run: an uncaught exception printed and
status 1, SystemExit's status, threads joined, atexit handlers run, stdio flushed; only the
modules are not freed (see `leave`).

Run as a script (`python zygote.py SOCKET MODULE,MODULE,...`): it imports nothing of eagle3_tui or the tests, so a
child imports the package fresh, under its own environment. Exits when its stdin closes (the test
worker is gone)."""

import atexit
import gc
import json
import os
import resource
import runpy
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
import types


def preload(names: list[str]) -> None:
    """Import `names` with stdout and stderr going to a scratch file: a module that says something
    as it is imported (a warning, a notice) would say it here, not in a run, so it fails the start."""
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as said:
        for fd in (1, 2):
            os.dup2(said.fileno(), fd)
        try:
            for name in names:
                __import__(name)
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            for fd, old in zip((1, 2), saved):
                os.dup2(old, fd)
                os.close(old)
        said.seek(0)
        text = said.read().decode(errors="replace")
    if text:
        sys.exit(f"importing {', '.join(names)} printed (a fresh run would show it):\n{text}")


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    head, fds, _flags, _addr = socket.recv_fds(conn, 8, 3)
    (size,) = struct.unpack("!Q", head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("request cut short")
        body += chunk
    return json.loads(body), fds


def serve(path: str) -> tuple[dict, list[int]]:
    """Answer runs until the worker goes; returns only in a forked child, with its request."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    waiting: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, the client's connection)
    while True:
        ready, _, _ = select.select([listener, sys.stdin.fileno(), *waiting], [], [])
        for r in ready:
            if r == sys.stdin.fileno():
                if not os.read(r, 4096):
                    sys.exit(0)
            elif r is listener:
                conn, _ = listener.accept()
                try:
                    request, fds = _receive(conn)
                except (OSError, ValueError):
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    conn.close()
                    for pidfd, (_pid, other) in waiting.items():
                        os.close(pidfd)
                        other.close()
                    return request, fds
                for fd in fds:
                    os.close(fd)
                waiting[os.pidfd_open(pid)] = (pid, conn)
                conn.sendall(f"{pid}\n".encode())
            else:
                pid, conn = waiting.pop(r)
                os.close(r)
                _, status = os.waitpid(pid, 0)
                try:
                    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    pass
                conn.close()


def become(request: dict, fds: list[int]) -> list[str]:
    """Make this forked child the run's process: its files, cwd, environment and limits."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if request.get("memory"):
        resource.setrlimit(resource.RLIMIT_AS, (request["memory"], request["memory"]))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # a fresh interpreter seeds these from the OS: no two runs may share a stream
    import random

    random.seed()
    sys.modules["numpy"].random.seed()
    return request["argv"]


def leave(code: int, signum: int | None = None) -> None:
    """What Python does at exit, less freeing the modules: joining threads, atexit handlers and
    flushing stdio. Freeing torch and transformers copies every page the parent shares (3 s).
    With `signum` (Ctrl+C), the process dies of that signal, as Python's does, for the parent to see."""
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = 120
    if signum is not None:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(code)


def exit_code(exit: SystemExit) -> int:
    """The status Python gives a SystemExit that reaches the top."""
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code
    print(exit.code, file=sys.stderr)
    return 1


def main(argv: list[str]) -> None:
    if argv[1] == "-m":
        sys.argv = ["-m", *argv[3:]]
        sys.path[0] = os.getcwd()
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
    else:
        sys.argv = ["-c", *argv[3:]]
        sys.path[0] = ""
        module = types.ModuleType("__main__")
        sys.modules["__main__"] = module
        exec(compile(argv[2], "<string>", "exec"), module.__dict__)


if __name__ == "__main__":
    preload(sys.argv[2].split(","))
    gc.freeze()  # the children's collections leave the parent's objects (and their pages) alone
    request = become(*serve(sys.argv[1]))
    try:
        main(request)
    except SystemExit as exit:
        leave(exit_code(exit))
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        leave(130, signal.SIGINT)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        leave(1)
    leave(0)
