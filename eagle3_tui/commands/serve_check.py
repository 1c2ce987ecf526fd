"""`eagle3-tui serve-check DRAFTER DATASET --model DIR [--engine NAME==VERSION] [--json]`: will the
drafter be fed, on each serving engine and release, the layers its training data holds?

The dataset's boundaries are found as `scan --model` finds them (dataset/pipeline.py: the scan,
then the representatives identified against the target model: the majority's and every group
that differs); the drafter's config.json is then read as each engine reads it
(dataset/serving/: one module per engine, its rules cut at every release read where they change)
and compared.

Text (real lines, values escaped): the verdict and the fix first, the data and the drafter, one
aligned line per engine and version range (verdict, engine, what it captures, why), the findings.
--json: one line, {"data", "drafter", "engines", "findings", "fix", "read", "asked"}.
--engine NAME==VERSION (one per engine): only those engines' rows, at those versions, are shown and
decide the verdict and the exit code (a version not read is read with the nearest release's rules,
and said to be).
--live ENGINE (--engine-python, --accept N): the engine installed here run on training prompts
with the drafter, what it feeds the drafter identified and set beside the data, its measured
acceptance beside accept's (commands/_serve_live.py; "live" in the JSON).
Exit 0 when every current serving rule captures what the data holds (and the live engine feeds
what the data holds), 1 when one does not or fails,
or an error finding says the drafter's ids are not ids; 2 when an input cannot be read (the
dataset, the model, the drafter's config.json).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import posixpath
import sys
from typing import TYPE_CHECKING, Any

from eagle3_tui.commands._options import add_connection_arguments, to_json_ready
from eagle3_tui.commands._serve_live import add_live_arguments
from eagle3_tui.dataset.serving_inputs import model_arch, read_config
from eagle3_tui.engines.scan.options import ScanOptions
from eagle3_tui.sources.base import Source, SourceError

if TYPE_CHECKING:
    from eagle3_tui.dataset.shapes import LayersEntry


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("drafter", metavar="DRAFTER", help="EAGLE-3 drafter folder or its config.json (on the data's machine)")
    p.add_argument("target", metavar="DATASET", help="dataset folder: /path or [user@]host:path")
    p.add_argument("--model", required=True, metavar="DIR",
                   help="target model folder on the data's machine: names the boundary each slot holds")
    p.add_argument("--json", action="store_true", help="print the result as one JSON line")
    p.add_argument("--engine", action="append", metavar="NAME==VERSION",
                   help="the engine and release you serve with (vllm, sglang, tokenspeed, trtllm; e.g. "
                        "vllm==0.33.0), once per engine: only its rows, at that release (default: every engine's)")
    add_live_arguments(p)
    add_connection_arguments(p)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import explain_source_error, local_folder_problem, on_host, open_cli_source, say
    from eagle3_tui.dataset.serving.versions import asked_engines
    from eagle3_tui.target import TargetError, parse_target

    try:
        asked = asked_engines(args.engine)
    except ValueError as err:
        say(f"serve-check: {err}")
        return 2

    try:
        target = parse_target(args.target)
        model = on_host(args.model, target, "--model")
        drafter = on_host(args.drafter, target, "DRAFTER")
    except (SourceError, TargetError) as err:
        say(f"serve-check: {err}")
        return 2
    if not target.is_remote and (problem := local_folder_problem(model)) is not None:
        say(f"serve-check: {problem}")
        return 2
    source = open_cli_source(target, args)
    try:
        try:
            await source.connect()
        except SourceError as err:
            say(f"serve-check: {err}")
            explain_source_error(err)
            return 2
        join = posixpath.join if target.is_remote else os.path.join
        try:
            config = await read_config(source, drafter, join)
            arch = await model_arch(source, join(model, "config.json"))
        except (SourceError, ValueError) as err:
            say(f"serve-check: {err}")
            return 2
        # the engine starts (a minute on a CPU) while the dataset's layers are found, here on one
        # torch thread: vLLM's CPU build binds its own to a core, and a second one here would
        # share that core with it (its start-up took 3x as long)
        live_task = None
        if args.live:
            if not target.is_remote:
                _one_thread()
            live_task = asyncio.create_task(_live(args, source, target, model, drafter))
        try:
            entries = await dataset_layers(source, target.path, model)
            live = await live_task if live_task is not None else None
        except BaseException:
            if live_task is not None:
                live_task.cancel()
            raise
    finally:
        await source.close()
    if isinstance(entries, str):
        say(f"serve-check: {entries}")
        return 2
    return report(config, entries, arch, args.json, live, asked=asked)


def _one_thread() -> None:
    # lazy: torch: loaded when used, never at start-up
    import torch

    torch.set_num_threads(1)


async def _live(args: argparse.Namespace, source: Source, target, model: str, drafter: str) -> dict[str, Any]:
    # lazy: the live run's modules only when asked
    from eagle3_tui.commands._serve_live import run_live

    join = posixpath if target.is_remote else os.path
    folder = join.dirname(drafter) if drafter.endswith(".json") else drafter
    return await run_live(args, source, target.path, model, folder)


def report(config: dict[str, Any], entries: list[LayersEntry], arch: str | None, as_json: bool,
           live: dict[str, Any] | None = None,
           asked: dict[str, str | None] | None = None) -> int:
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import say
    from eagle3_tui.dataset.serving import check, data_from_layers, exit_code, format_check

    data = data_from_layers(entries)
    if data is None:
        errors = "; ".join(e["error"] for e in entries if "error" in e) or "no file of the majority could be identified"
        say(f"serve-check: the dataset's boundaries are unknown: {errors}")
        return 2
    result = check(config, data, arch, asked)
    if as_json:
        sys.stdout.write(json.dumps(to_json_ready({**result, **({"live": live} if live is not None else {})})) + "\n")
    else:
        sys.stdout.write(format_check(result) + "\n")  # its values escaped, its lines real
        if live is not None:
            from eagle3_tui.dataset.serving_live import format_live

            sys.stdout.write("\n" + format_live(live) + "\n")
    code = exit_code(result)
    return max(code, 1) if live is not None and not live.get("match") else code


async def dataset_layers(source: Source, root: str, model: str) -> list[LayersEntry] | str:
    """`scan --model`'s layers entries of the dataset (the same pipeline), or why there are none."""
    # lazy: pulls sqlite3 in: loaded when used
    from eagle3_tui.dataset import pipeline as pl
    from eagle3_tui.dataset.serving import data_from_layers
    from eagle3_tui.engines.read import torch_gate

    pipeline = pl.DatasetPipeline(source, root, ScanOptions(model=model))
    layers = None
    async for event in pipeline.events():
        if isinstance(event, pl.ScanEnded) and event.outcome == "failed":
            return str(event.error)
        if isinstance(event, pl.Layers):
            layers = event
    refused = [r["error"] for r in pipeline.records if torch_gate.refused(r.get("error"))]
    if refused and (layers is None or data_from_layers(layers.entries) is None):  # the refusals decided
        n = len(pipeline.records)
        return f"{'all ' + str(n) if len(refused) == n else f'{len(refused)} of {n}'} files were refused: {refused[0]}"
    if layers is None:
        return "the scan found no samples to identify"
    return layers.entries
