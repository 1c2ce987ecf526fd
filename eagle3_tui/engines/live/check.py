"""The serving engine the user runs, run on the data's own prompts and set beside the training data:
the boundaries it feeds the drafter (identified by the target model, not read off a table), and with
`accept` the acceptance it counts beside accept's offline prediction. Runs where the data is (this
machine, or the box through the agent): the engine in its own Python (run.py), the identification
and the offline acceptance here.

    report = live_check(root, model=..., drafter=..., engine="vllm", python=..., accept=4)

torch and the standard library (the engines it calls).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from eagle3_tui.engines.live.run import LiveError, memory_estimate, program, run_engine
from eagle3_tui.engines.model.accept import accept_file
from eagle3_tui.engines.model.accept_words import TARGETS
from eagle3_tui.engines.model.identify import bounds_of, identify_pair
from eagle3_tui.engines.read.file_names import SAMPLE_EXT, natural
from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.sample import SampleError
from eagle3_tui.engines.results.live import LiveReport

__all__ = ["LiveError", "LiveReport", "live_check"]

#: training prompts whose prefill the engine feeds the drafter, to identify (one model run each)
FEED_FILES = 1
#: the longest prompt a live run sends (rows past it are not needed to tell layers apart)
MAX_PROMPT = 2048
#: sample files looked at, at most, for prompts (the first ones in natural order)
MAX_LOOKED = 64



def live_check(root: str, *, model: str, drafter: str, engine: str, python: str | None = None, accept: int = 0,
               steps: int = 3, timeout: float = 900.0, engine_args: dict | None = None,
               cancel: threading.Event | None = None, progress: Callable[[str], None] = lambda _s: None) -> LiveReport:
    """Run `engine` (its Python: `python`, else the one running this) on the first training
    files' prompts under `root`; LiveError (one line) when it cannot run or the data gives none."""
    python = python or sys.executable
    program(engine)  # an engine that cannot run live says so before anything is read
    prompts = _prompts(sample_files(root), max(FEED_FILES, accept))
    if not prompts:
        raise LiveError("no training file with token ids and a loss mask to take a prompt from")
    feed = prompts[:FEED_FILES]
    asked = prompts[:accept]
    longest = max(len(p["ids"]) for p in prompts)
    report: LiveReport = {"engine": engine, "python": python, "memory_gib": round(memory_estimate(model, drafter), 1),
                          "files": [p["path"] for p in feed]}
    progress(f"{engine} will take about {report['memory_gib']:.1f} GiB (weights in float32, a 1 GiB KV cache, "
             f"its runtime); time limit {timeout:.0f} s")
    out = tempfile.mkdtemp(prefix="eagle3-live-")
    try:
        request = {"model": model, "drafter": drafter, "dtype": "float32", "num_speculative_tokens": steps,
                   "max_model_len": _round_up(longest + 16), "out": out, "engine_args": engine_args or {},
                   "feed": [p["ids"] for p in feed],
                   "accept": [[p["ids"][: p["start"]], len(p["ids"]) - p["start"]] for p in asked]}
        result = run_engine(python, engine, request, timeout=timeout, cancel=cancel, progress=progress)
        report.update({"version": result["version"], "ids": result.get("ids"), "seconds": float(result.get("seconds") or 0)})
        progress("identifying what it fed the drafter, and the data, with the target model")
        _identified(report, feed, result["fed"], model, cancel)
        if asked and result.get("accept"):
            progress("the offline prediction on the same prompts")
            _acceptance(report, asked, result["accept"], drafter, model, steps)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return report


def _prompts(files: list[str], n: int) -> list[dict[str, Any]]:
    """The first n training samples' token ids (valid rows, at most MAX_PROMPT) and where their
    loss starts (the prompt the engine is asked; the rest is the answer it should write)."""
    out: list[dict[str, Any]] = []
    for path in files:
        if len(out) >= n:
            break
        try:
            s = load_sample(path)
        except SampleError:
            continue
        if s.ids is None or s.loss_mask is None:
            continue
        v = min(s.valid_len, MAX_PROMPT)
        mask = s.loss_mask[:v].tolist()
        if 1 not in mask or mask.index(1) < 1:
            continue
        out.append({"path": path, "sample": s, "ids": [int(i) for i in s.ids[:v].tolist()], "start": mask.index(1)})
    return out


def _identified(report: LiveReport, feed: list[dict], fed: list[dict], model: str,
                cancel: threading.Event | None) -> None:
    """Per slot, the boundary the engine fed and the one the data holds: the first prompt's."""
    capture = load_sample(fed[0]["file"])
    pair = identify_pair(feed[0]["sample"], capture, model, cancel=cancel)
    if "error" in pair or "error" in pair.get("a", {}) or "error" in pair.get("b", {}):
        why = pair.get("error") or pair.get("a", {}).get("error") or pair.get("b", {}).get("error")
        raise LiveError(f"the target model could not identify the states: {why}")
    data, got = bounds_of(pair["a"]), bounds_of(pair["b"])
    explained = pair.get("explained")
    message = explained["message"] if explained else None
    if message:  # compare's A and B: here the data and what the engine fed
        for side, name in (("A's", "the data's"), ("B's", "the engine's"), ("A b", "data b"), ("B b", "fed b")):
            message = message.replace(side, name)
    report.update({"fed": got, "data": data, "match": got == data, "explained": message,
                   "cosines": [{"slot": i, "fed": b.get("cosine"), "data": a.get("cosine")}
                               for i, (a, b) in enumerate(zip(pair["a"]["slots"], pair["b"]["slots"], strict=False))]})


def _acceptance(report: LiveReport, asked: list[dict], measured: dict, drafter: str, model: str, steps: int) -> None:
    """The engine's counters as rates per draft position, beside accept's on the same samples,
    replayed where the engine drafts: from the prompt's last row, each draft starting past the
    tokens the one before got accepted, plus the one the target adds (accept's row t feeds token
    t + 1 and guesses t + 2 on: the engine's first draft after a prompt of P tokens is row P - 1).
    Where the engine's greedy answer is the data's and it feeds the data's states, the two count
    the same drafts and differ only where float32 and the data's dtype round a near tie apart."""
    drafts = measured.get("drafts") or 0
    per_pos = measured.get("per_position") or []
    report["acceptance"] = {
        "measured_by": f"{report['engine']} {report.get('version')}'s own counters (vllm:spec_decode_*), against "
                       "the target model's next token (greedy verification)",
        "drafts": drafts, "per_position": [round(x / drafts, 4) if drafts else None for x in per_pos],
        "mean_length": round(1 + measured.get("accepted", 0) / drafts, 4) if drafts else None}
    leads: list[int] = []
    sources = set()
    for p in asked:
        res = accept_file(p["path"], drafter, model=model, steps=steps, all_rows=True)
        if "error" in res:
            continue
        sources.add(str(res.get("target_source")))
        lead = {int(t["row"]): int(t.get("accepted", 0)) for t in res.get("per_token", [])}
        row, last = p["start"] - 1, len(p["ids"]) - 2  # the last row with a token to guess
        while row in lead and row <= last:
            leads.append(lead[row])
            row += lead[row] + 1
    n = len(leads)
    report["offline"] = {
        "measured_by": f"accept's prediction on the same samples at the engine's draft points "
                       f"(against {' and '.join(TARGETS.get(s, s) for s in sorted(sources)) or 'nothing'})",
        "drafts": n, "per_position": [round(sum(a >= k for a in leads) / n, 4) if n else None for k in range(1, steps + 1)],
        "mean_length": round(1 + sum(leads) / n, 4) if n else None}
    outputs = measured.get("outputs") or []
    report["greedy_same"] = [out == p["ids"][p["start"] :] for out, p in zip(outputs, asked, strict=False)]


def _round_up(n: int) -> int:
    return -(-n // 256) * 256


def sample_files(root: str) -> list[str]:
    """The first MAX_LOOKED sample files under root (a file itself: that file), folders and files in
    natural order, hidden names skipped."""
    if not os.path.isdir(root):
        return [root]
    out: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted((d for d in dirs if not d.startswith(".")), key=natural)
        out += [os.path.join(folder, f) for f in sorted(files, key=natural)
                if not f.startswith(".") and f.endswith(SAMPLE_EXT)]
        if len(out) >= MAX_LOOKED:
            break
    return out[:MAX_LOOKED]
