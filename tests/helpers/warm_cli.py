"""`python -m eagle3_tui ...` and `python -c ...` runs forked from a warm interpreter: a drop-in for
`subprocess.run` in the tests that run a command as a user would but are not about how the
interpreter starts.

Each run is its own process (tests/helpers/zygote.py forks it), with the run's own stdin, stdout,
stderr, cwd, environment, exit status and memory limit, and a timeout that kills it. What it saves
is the 2-5 s of CPU a fresh `python` spends importing torch and transformers: the parent imported
them once, before any eagle3_tui module (a child imports the package fresh, under its own
environment). The tests of startup itself (tests/test_startup_imports.py, `--help` without torch,
the documented commands, the installed entry point) keep real subprocesses, and so does a run a
test signals mid-run (Popen).

One server per test worker, started at the first run and gone with the worker."""

from __future__ import annotations

import atexit
import io
import json
import locale
import os
import selectors
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.helpers.processes import REPO_ROOT, subprocess_env

ZYGOTE = Path(__file__).with_name("zygote.py")
BOX_PYTHON = Path(__file__).with_name("box_python.py")
_servers: dict[str, tuple[subprocess.Popen, str]] = {}  # python -> (server, its socket)
#: what the warm interpreter imports; another Python (the old-torch venv's, where transformers
#: refuses that torch with a notice) imports torch and numpy only
PRELOAD = ("numpy", "torch", "safetensors.torch", "tokenizers", "transformers",
           "transformers.models.llama.modeling_llama")


def _zygote(python: str) -> str:
    """The socket of this worker's warm `python`, started on first use."""
    if python in _servers and _servers[python][0].poll() is None:
        return _servers[python][1]
    path = os.path.join(tempfile.mkdtemp(prefix="eagle3-zygote-"), "sock")
    modules = PRELOAD if python == sys.executable else PRELOAD[:2]
    proc = subprocess.Popen([python, str(ZYGOTE), path, ",".join(modules)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=subprocess_env(), cwd=str(REPO_ROOT))
    ready = proc.stdout.readline()
    if ready != b"ready\n":
        proc.kill()
        raise RuntimeError(f"the warm interpreter did not start (exit {proc.wait()})")
    atexit.register(proc.kill)
    atexit.register(shutil.rmtree, os.path.dirname(path), True)
    _servers[python] = (proc, path)
    return path


def warm_box_python() -> str:
    """A --remote-python for the tests over SSH that are not about how the agent starts: the agent
    is forked from this worker's warm interpreter (tests/helpers/box_python.py)."""
    return " ".join(shlex.quote(p) for p in (sys.executable, str(BOX_PYTHON), _zygote(sys.executable)))


def run(args, *, input: bytes | str | None = None, capture_output: bool = True, text: bool = False,
        encoding: str | None = None, errors: str | None = None, env: dict[str, str] | None = None,
        cwd: str | os.PathLike | None = None, timeout: float | None = None, check: bool = False,
        memory: int | None = None, stdin: int | None = None) -> subprocess.CompletedProcess:
    """subprocess.run(args, capture_output=True, ...) for `[PYTHON, "-m" | "-c", ...]` (one warm
    interpreter per PYTHON: sys.executable, the old-torch venv's);
    `memory` is the run's RLIMIT_AS in bytes. A run without input reads an empty stdin (stdin may
    only be None or DEVNULL). Anything else runs as a plain subprocess."""
    if stdin not in (None, subprocess.DEVNULL):
        raise ValueError("a warm run's stdin is its input")
    argv = [str(a) for a in args]
    if not capture_output:
        raise ValueError("a warm run always captures its output")
    text = text or encoding is not None or errors is not None
    if not Path(argv[0]).name.startswith("python") or len(argv) < 3 or argv[1] not in ("-m", "-c"):
        return subprocess.run(argv, input=input, capture_output=True, text=text, encoding=encoding, errors=errors,
                              env=env, cwd=cwd, timeout=timeout, check=check)
    if isinstance(input, str):
        input = input.encode(encoding or locale.getencoding(), errors or "strict")
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        proc = Popen(argv, stdin=in_r, stdout=out_w, stderr=err_w, env=env, cwd=cwd, memory=memory)
    finally:  # the child has its own copies
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    out, err, expired = _communicate(in_w, out_r, err_r, input or b"", timeout)
    if expired:
        proc.kill()
    code = proc.wait()
    if text:
        out, err = _decoded(out, encoding, errors), _decoded(err, encoding, errors)
    if expired:
        raise subprocess.TimeoutExpired(argv, timeout, out, err)
    done = subprocess.CompletedProcess(argv, code, out, err)
    if check:
        done.check_returncode()
    return done


def _communicate(in_w: int, out_r: int, err_r: int, data: bytes,
                 timeout: float | None) -> tuple[bytes, bytes, bool]:
    """Feed stdin and drain stdout and stderr until both close; True when the timeout passed first."""
    deadline = None if timeout is None else time.monotonic() + timeout
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    with selectors.DefaultSelector() as sel:
        for fd in chunks:
            sel.register(fd, selectors.EVENT_READ)
        if data:
            os.set_blocking(in_w, False)
            sel.register(in_w, selectors.EVENT_WRITE)
        else:
            os.close(in_w)
        view = memoryview(data)
        expired = False
        while sel.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                expired = True
                break
            for key, _ in sel.select(left):
                fd = key.fd
                if fd == in_w:
                    try:
                        view = view[os.write(fd, view[:65536]):]
                    except BrokenPipeError:
                        view = view[:0]
                    if not view:
                        sel.unregister(fd)
                        os.close(fd)
                    continue
                chunk = os.read(fd, 65536)
                if chunk:
                    chunks[fd].append(chunk)
                else:
                    sel.unregister(fd)
                    os.close(fd)
        for key in list(sel.get_map().values()):
            sel.unregister(key.fd)
            os.close(key.fd)
    return b"".join(chunks[out_r]), b"".join(chunks[err_r]), expired


def _decoded(data: bytes, encoding: str | None, errors: str | None) -> str:
    """What subprocess's text mode gives: the locale's encoding, universal newlines."""
    wrapper = io.TextIOWrapper(io.BytesIO(data), encoding=encoding or locale.getencoding(), errors=errors)
    return wrapper.read()


class Popen:
    """The part of subprocess.Popen that a caller waiting on a child uses (pid, poll, wait with a
    timeout, kill, returncode), for a warm run of `[PYTHON, "-m" | "-c", ...]` whose stdin, stdout
    and stderr are files (or descriptors) of the caller's: the child reads and writes them itself.
    run() is this with pipes; `memory` is the child's RLIMIT_AS in bytes."""

    def __init__(self, args, *, stdin, stdout, stderr, env: dict[str, str] | None = None,
                 cwd: str | os.PathLike | None = None, memory: int | None = None) -> None:
        self.args = [str(a) for a in args]
        self.returncode: int | None = None
        request = json.dumps({"argv": self.args, "env": dict(os.environ if env is None else env),
                              "cwd": str(cwd if cwd is not None else os.getcwd()), "memory": memory}).encode()
        fds = [f if isinstance(f, int) else f.fileno() for f in (stdin, stdout, stderr)]
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._conn.connect(_zygote(self.args[0]))
        socket.send_fds(self._conn, [struct.pack("!Q", len(request))], fds)
        self._conn.sendall(request)
        self._answers = self._conn.makefile("rb")
        self.pid = int(self._answers.readline())
        self._ended = threading.Event()
        threading.Thread(target=self._reap, name=f"warm-{self.pid}", daemon=True).start()

    def _reap(self) -> None:
        line = self._answers.readline()  # the zygote writes the exit status when it reaped the child
        self._answers.close()
        self._conn.close()
        self.returncode = int(line) if line.strip() else -signal.SIGKILL
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
