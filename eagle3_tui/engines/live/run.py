"""Start the engine the user serves with in its own Python, hand it one request, read its answer:
bounded in time, cancellable, its whole process group ended whatever happens.

    result = run_engine(python, request, timeout=600, cancel=event, progress=print)

The program run there is engines/live/vllm_engine.py (sent as `python -c`, so nothing needs to be
installed beside the engine). Standard library only.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable

from eagle3_tui.engines.live import vllm_engine

#: engines this module can run live, and the program (a module of engines/live/, imported so that
#: the agent ships it to the box) that runs each
PROGRAMS = {"vllm": vllm_engine}
MARK = "EAGLE3-LIVE"
#: what vLLM's CPU build takes beside the weights and the KV cache (measured: 1.87 GiB of
#: "non-kv usages" for SmolLM2-135M in float32 with a drafter, vLLM 0.32.0)
RUNTIME_GIB = 2.0
#: the KV cache the live run asks for (VLLM_CPU_KVCACHE_SPACE): a few prompts of a few thousand
#: tokens (vLLM's CPU build otherwise takes most of the machine's memory)
KV_CACHE_GIB = 1


class LiveError(Exception):
    """The engine could not be run, or said why it failed: one line."""


def program(engine: str) -> str:
    """The program's text, from its module's loader: a file here, the shipped source on the box."""
    if engine not in PROGRAMS:
        raise LiveError(f"{engine} is not available live (no build of it runs on a CPU here): its rows come from "
                        f"the table above; engines run live: {', '.join(PROGRAMS)}")
    module = PROGRAMS[engine]
    get_source = getattr(module.__loader__, "get_source", None)
    source = get_source(module.__name__) if get_source is not None else None
    if not source:
        raise LiveError(f"the program that runs {engine} is missing from this installation")
    return source


def memory_estimate(model: str, drafter: str, dtype: str = "float32") -> float:
    """GiB the live run will take: the weights as the engine holds them (float32 doubles a bf16
    checkpoint), the KV cache asked for and the engine's own runtime."""
    total = 0.0
    for folder in (model, drafter):
        stored = _stored_bytes_per_param(folder)
        size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(folder, "*.safetensors")))
        total += size * ((4 if dtype == "float32" else 2) / stored)
    return total / 2**30 + KV_CACHE_GIB + RUNTIME_GIB


def _stored_bytes_per_param(folder: str) -> int:
    try:
        with open(os.path.join(folder, "config.json")) as fh:
            cfg = json.load(fh)
    except (OSError, ValueError):
        return 2
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16") if isinstance(cfg, dict) else "bfloat16"
    return 4 if "32" in dtype else 2


def run_engine(python: str, engine: str, request: dict, *, timeout: float = 600.0,
               cancel: threading.Event | None = None, progress: Callable[[str], None] = lambda _s: None) -> dict:
    """The engine's result for `request` (vllm_engine.py's protocol); LiveError with one line when
    it cannot start, fails, runs past `timeout` seconds or is cancelled."""
    source = program(engine)
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen([python, "-c", source], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=err, start_new_session=True, text=True,
                                    env={**os.environ, "PYTHONUNBUFFERED": "1"})
        except OSError as exc:
            raise LiveError(f"cannot start {python}: {exc.strerror or exc}") from None
        lines: list[dict] = []
        reader = threading.Thread(target=_read, args=(proc, lines, progress), daemon=True)
        try:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.close()
            reader.start()
            deadline = time.monotonic() + timeout
            while reader.is_alive():
                reader.join(0.2)
                if cancel is not None and cancel.is_set():
                    raise LiveError("cancelled")
                if time.monotonic() > deadline:
                    raise LiveError(f"the engine did not finish in {timeout:.0f} s: stopped")
        finally:
            _end(proc)
        for line in lines:
            if "result" in line:
                return line["result"]
            if "error" in line:
                raise LiveError(f"{engine} failed: {line['error']}")
        err.seek(0)
        tail = [t for t in err.read().decode("utf-8", "replace").splitlines() if t.strip()][-3:]
        raise LiveError(f"{engine} ended without an answer (exit {proc.returncode})"
                        + (f": {' | '.join(t.strip()[:160] for t in tail)}" if tail else ""))


def _read(proc: subprocess.Popen, lines: list[dict], progress: Callable[[str], None]) -> None:
    assert proc.stdout is not None
    for raw in proc.stdout:
        if not raw.startswith(MARK + " "):
            continue  # whatever the engine printed itself
        try:
            line = json.loads(raw[len(MARK) + 1 :])
        except ValueError:
            continue
        if "progress" in line:
            progress(str(line["progress"]))
        else:
            lines.append(line)


def _end(proc: subprocess.Popen) -> None:
    """The engine's process group ended (vLLM starts threads and may start processes)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
