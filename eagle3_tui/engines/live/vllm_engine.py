"""Run the vLLM the user serves with, in its own Python, and watch what it feeds the drafter.

This file is a program, not imported by the package: engines/live/run.py starts
`<engine python> -c <this file's text>` (the engine's own virtual environment, or the box's
Python over SSH) and sends one JSON request on stdin:

    {"model", "drafter", "dtype", "num_speculative_tokens", "max_model_len", "kv_cache_gib",
     "engine_args": {...}, "out": folder for the fed states,
     "feed": [[token ids], ...],          prompts whose prefill states are captured
     "accept": [[prompt ids, max_tokens], ...]}   greedy requests whose acceptance is counted

It answers with JSON lines that start with MARK (vLLM's own logging goes to stderr):
    MARK {"progress": "..."}
    MARK {"result": {"engine": "vllm", "version", "ids": [the aux layer ids vLLM set on the target],
                     "fed": [{"file", "rows", "width"}], "accept": {"drafts", "draft_tokens",
                     "accepted", "per_position": [counts], "outputs": [[token ids]]}, "seconds"}}
    MARK {"error": "..."}
and exits. What it feeds the drafter is read by wrapping the drafter's combine_hidden_states (the
states of the target's aux layers, concatenated, before the drafter's fc): vLLM 0.32.0
model_executor/models/llama_eagle3.py (Eagle3LlamaForCausalLM.combine_hidden_states), called by
v1/spec_decode/eagle.py for every proposal; the first call of a request holds its prefill rows.
The engine runs in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0), greedy, eager, seed 0.

Standard library, torch and vLLM only: it runs where the package is not installed.
"""

import json
import os
import sys
import time

MARK = "EAGLE3-LIVE"


def say(**line):
    sys.stdout.write(MARK + " " + json.dumps(line) + "\n")
    sys.stdout.flush()


def _runner(llm):
    """vLLM's model runner in this process: the target model and the drafter's proposer."""
    engine = llm.llm_engine
    core = getattr(engine, "engine_core", None)
    core = getattr(core, "engine_core", core)
    executor = getattr(core, "model_executor", None) or getattr(engine, "model_executor", None)
    worker = getattr(executor, "driver_worker", None)
    worker = getattr(worker, "worker", worker)
    runner = getattr(worker, "model_runner", None)
    if runner is None or getattr(runner, "drafter", None) is None:
        raise RuntimeError("this vLLM keeps its model runner elsewhere than 0.32.0 does "
                           "(engine_core.model_executor.driver_worker.worker.model_runner.drafter): "
                           "what it feeds the drafter cannot be watched")
    return runner


def _aux_ids(model):
    for obj in (model, getattr(model, "model", None)):
        ids = getattr(obj, "aux_hidden_state_layers", None)
        if ids is not None:
            return [int(i) for i in ids]
    return None


def _counters(llm):
    """vLLM's own spec-decode counters (vllm.v1.metrics.reader)."""
    out = {}
    for metric in llm.get_metrics():
        if metric.name.startswith("vllm:spec_decode"):
            out[metric.name] = list(metric.values) if hasattr(metric, "values") else metric.value
    return out


def run(req):
    started = time.monotonic()
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ["VLLM_CPU_KVCACHE_SPACE"] = str(req.get("kv_cache_gib", 1))
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    import torch
    import vllm
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    say(progress=f"starting vLLM {vllm.__version__} with the drafter")
    llm = LLM(model=req["model"], dtype=req.get("dtype", "float32"), max_model_len=req["max_model_len"],
              enforce_eager=True, seed=0, disable_log_stats=not req.get("accept"),  # its counters: --accept
              speculative_config={"method": "eagle3", "model": req["drafter"],
                                  "num_speculative_tokens": req.get("num_speculative_tokens", 3)},
              **{"enable_prefix_caching": False, **req.get("engine_args", {})})
    runner = _runner(llm)
    proposer_model = runner.drafter.model
    fed = []
    combine = proposer_model.combine_hidden_states

    def watched(hidden_states):
        fed.append(hidden_states.detach().to("cpu", torch.float32).clone())
        return combine(hidden_states)

    proposer_model.combine_hidden_states = watched
    greedy = SamplingParams(temperature=0.0, max_tokens=2)
    files = []
    for i, ids in enumerate(req.get("feed", [])):
        say(progress=f"prefill {i + 1} of {len(req['feed'])}: {len(ids)} tokens")
        fed.clear()
        llm.generate([TokensPrompt(prompt_token_ids=ids)], greedy, use_tqdm=False)
        rows = next((x for x in fed if x.shape[0] == len(ids)), None)
        if rows is None:
            raise RuntimeError(f"vLLM fed the drafter no prefill of {len(ids)} rows (calls: "
                               f"{[tuple(x.shape) for x in fed][:4]})")
        path = os.path.join(req["out"], f"fed_{i}.pt")
        torch.save({"input_ids": torch.tensor(ids, dtype=torch.int64), "aux_hidden_state": rows}, path)
        files.append({"file": path, "rows": int(rows.shape[0]), "width": int(rows.shape[1])})
    proposer_model.combine_hidden_states = combine
    accept = None
    if req.get("accept"):
        before = _counters(llm)
        prompts = [TokensPrompt(prompt_token_ids=ids) for ids, _ in req["accept"]]
        params = [SamplingParams(temperature=0.0, max_tokens=n) for _, n in req["accept"]]
        say(progress=f"speculative decoding on {len(prompts)} prompts")
        outs = llm.generate(prompts, params, use_tqdm=False)
        after = _counters(llm)
        accept = _delta(before, after)
        accept["outputs"] = [list(o.outputs[0].token_ids) for o in outs]
    return {"engine": "vllm", "version": vllm.__version__, "ids": _aux_ids(runner.model), "fed": files,
            "accept": accept, "seconds": round(time.monotonic() - started, 1)}


def _delta(before, after):
    def get(name, default):
        return after.get(name, default), before.get(name, default)

    out = {}
    for key, name in (("drafts", "num_drafts"), ("draft_tokens", "num_draft_tokens"),
                      ("accepted", "num_accepted_tokens")):
        a, b = get(f"vllm:spec_decode_{name}", 0)
        out[key] = int(a - b)
    a, b = get("vllm:spec_decode_num_accepted_tokens_per_pos", [])
    out["per_position"] = [int(x - (b[i] if i < len(b) else 0)) for i, x in enumerate(a)]
    return out


def main():
    try:
        req = json.loads(sys.stdin.readline())
        say(result=run(req))
    except BaseException as err:  # noqa: BLE001 - one line to the caller, whatever vLLM raised
        say(error=f"{type(err).__name__}: {str(err).strip().splitlines()[0][:300] if str(err).strip() else ''}")
    sys.stdout.flush()
    os._exit(0)  # vLLM's threads would keep a finished run alive


if __name__ == "__main__":
    main()
