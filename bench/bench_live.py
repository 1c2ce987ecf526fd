"""serve-check --live against the engine it runs (issue 56).

- serve_check_live: the wall time of `eagle3-tui serve-check DRAFTER DATA --model M --live vllm
  --engine-python P --json` (the command's start to its per-slot verdict: the table from the data's
  identified layers, vLLM started with the drafter, the prefills it feeds, what it fed identified by
  the target model) against vLLM's own start-up with the same model, drafter and flags plus one
  greedy request of the same prompt length, in a fresh `P` process, in the same run. The two
  alternate REPS times (EAGLE3_BENCH_REPS, default 2) and the medians are compared. Target 1.3.

The world is tests/helpers/vllm_world.py's (the real SmolLM2 folder, a SpecForge dataset of its
own chats, a drafter trained on it). Without vLLM's CPU build or the real model the figure is 0 and
the details say what to install.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPS = int(os.environ.get("EAGLE3_BENCH_REPS", "2"))

_ENGINE_ALONE = r"""
import os, sys, json, time
os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
os.environ["VLLM_CPU_KVCACHE_SPACE"] = "1"
from vllm import LLM, SamplingParams
from vllm.inputs import TokensPrompt
model, drafter, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
llm = LLM(model=model, dtype="float32", max_model_len=1024, enforce_eager=True, seed=0, enable_prefix_caching=False,
          speculative_config={"method": "eagle3", "model": drafter, "num_speculative_tokens": 3})
llm.generate([TokensPrompt(prompt_token_ids=[1] * n)], SamplingParams(temperature=0.0, max_tokens=2), use_tqdm=False)
print("done", flush=True)
os._exit(0)
"""


def _world(root: Path):
    from eagle3_tui.demo.real_model import FAMILIES, RealTarget, chats, missing, model_folder
    from eagle3_tui.demo.real_questions import QUESTIONS
    from tests.helpers.real_world import real_cache
    from tests.helpers.vllm_world import INSTALL, build, vllm_python

    python = vllm_python()
    if python is None:
        return None, f"vLLM's CPU build is not installed: {INSTALL}"
    if (why := missing(FAMILIES["smollm2"])) is not None:
        return None, why
    target = RealTarget(model_folder(real_cache(), family=FAMILIES["smollm2"]))
    return build(root, python, target, chats(target, QUESTIONS, cache=real_cache()), real_cache()), ""


def _timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=str(cwd), timeout=1800)
    return time.perf_counter() - t0, out.stdout


def serve_check_live() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        world, why = _world(Path(tmp))
        if world is None:
            return {"figure": 0, "baseline": 1, "unit": "s", "target": 1.3, "details": why}
        from eagle3_tui.engines.read.load import load_sample

        first = sorted(world.data.rglob("data_*.ckpt"), key=lambda p: int(p.stem.split("_")[1]))[0]
        n = load_sample(str(first)).valid_len
        ours_cmd = [sys.executable, "-m", "eagle3_tui", "serve-check", str(world.pinned), str(world.data), "--model",
                    str(world.model), "--live", "vllm", "--engine-python", world.python, "--json"]
        alone_cmd = [world.python, "-c", _ENGINE_ALONE, str(world.model), str(world.pinned), str(n)]
        ours, alone, verdicts = [], [], set()
        for _ in range(REPS):
            t, out = _timed(ours_cmd, Path(tmp))
            ours.append(t)
            live = json.loads(out.splitlines()[-1])["live"]
            verdicts.add((tuple(live.get("fed") or ()), live.get("match")))
            alone.append(_timed(alone_cmd, Path(tmp))[0])
        q, b = statistics.median(ours), statistics.median(alone)
        details = (f"serve-check --live vllm (table + engine + identification) {q:.1f} s (runs "
                   f"{', '.join(f'{x:.1f}' for x in ours)}) vs vLLM's start-up and one greedy request of {n} tokens "
                   f"{b:.1f} s ({', '.join(f'{x:.1f}' for x in alone)}); verdicts {sorted(verdicts)}; load average "
                   f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
        return {"figure": q, "baseline": b, "unit": "s", "target": 1.3, "details": details}


BENCHMARKS = {"serve_check_live": serve_check_live}
