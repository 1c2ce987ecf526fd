"""The box's `python` for the tests over SSH that are not about how Python starts on the box.

sshd runs `PYTHON box_python.py SOCKET -c BOOTSTRAP` (what `warm_box_python()` in
tests/helpers/warm_cli.py hands to --remote-python): this asks the test worker's warm interpreter
(tests/helpers/zygote.py, which imported torch and transformers once) at SOCKET to fork the agent
with this process's stdin, stdout, stderr, cwd and environment, so the agent reads and writes the
SSH channel itself, as it would started cold. It then waits for the agent, passes on SIGHUP, SIGTERM
and SIGINT, and exits with its status. What it saves is the 1.5-4 s of CPU a cold agent spends
importing torch and transformers, about 150 times a run.

Anything but `-c CODE ...`, or no warm interpreter to ask, runs the real Python in its place. The
tests of the agent's own life (its exit when sshd's session dies, no orphan) start it cold: an agent
forked here is the warm interpreter's child, not the session's.

Imports the standard library only (its start is the only start left on the box)."""

import json
import os
import signal
import socket
import struct
import sys


def cold(args: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, *args])


def main() -> None:
    path, args = sys.argv[1], sys.argv[2:]
    if len(args) < 2 or args[0] != "-c":
        cold(args)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        cold(args)
    request = json.dumps({"argv": [sys.executable, *args], "env": dict(os.environ), "cwd": os.getcwd(),
                          "memory": None}).encode()
    socket.send_fds(conn, [struct.pack("!Q", len(request))], [0, 1, 2])
    conn.sendall(request)
    answers = conn.makefile("rb")
    line = answers.readline()
    if not line.strip():  # the warm interpreter went away before it forked: nobody took the channel
        cold(args)
    pid = int(line)
    # The agent holds the channel now: sshd sees its end when the agent's copies close, not ours.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)

    def forward(signum, _frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, forward)
    status = answers.readline().strip()
    code = int(status) if status else 1
    os._exit(128 - code if code < 0 else code)  # a signal's death as a shell reports it


if __name__ == "__main__":
    main()
