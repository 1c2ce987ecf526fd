"""`eagle3-tui scan TARGET`: check every sample of a dataset folder, where the data lives.

Text: a progress line on stderr, then the findings, then one row per shard folder.
--json: one line per file record as it finishes, then {"summary": {...}, "findings": [...]}.
Exit 0 without warning/error findings, 1 with one, 2 when the target cannot be read,
130 when interrupted (what was found until then is still printed).

--model DIR: after the scan, a few representative files are identified against the target model
(dataset/layers.py): the text report gains a "layers" section, the JSON summary a "layers" list.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from collections import defaultdict
from typing import Any

from eagle3_tui.commands.ls import printable
from eagle3_tui.commands._options import add_connection_arguments, below_one, to_json_ready
from eagle3_tui.dataset.acceptance import ACCEPT_FILES, MAX_ACCEPT
from eagle3_tui.dataset.layers import IDENTIFY_TOKENS, MAX_IDENTIFY

PROGRESS_EVERY = 0.2


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="TARGET", help="dataset folder: /path or [user@]host:path")
    p.add_argument("--json", action="store_true", help="one JSON record per file, then the summary and findings")
    p.add_argument("--full", action="store_true", help="read every row (exact norms, NaN/Inf anywhere)")
    p.add_argument("--rows", type=int, default=64, metavar="N", help="rows per slot a quick scan reads (default 64)")
    p.add_argument("--workers", type=int, metavar="N", help="processes on the machine holding the data (default: all cores)")
    p.add_argument("--no-cache", action="store_true", help="scan every file again, ignoring cached records")
    p.add_argument("--drafter", metavar="DIR",
                   help="EAGLE-3 drafter folder on the data's machine: per-file drafter top-1 and a finding for "
                        "files far below the rest (quick: the first N loss rows; --full: all; no cache)")
    p.add_argument("--model", metavar="DIR",
                   help="target model folder on the data's machine: after the scan, names the boundary each slot "
                        f"holds by running the model on at most {MAX_IDENTIFY} files (one of the majority, one "
                        "per layer_group finding, one per other shard when there are few; the first "
                        f"{IDENTIFY_TOKENS} tokens of each; runs every time, needs transformers there); with "
                        "--drafter also the embed_tokens of a drafter without them")
    p.add_argument("--accept", metavar="DIR",
                   help="EAGLE-3 drafter folder on the data's machine: after the findings (and --model's layers), "
                        "the drafter's step-1 top-1 and τ per group of files (the groups --model reports), on a "
                        f"few files of each (at most {MAX_ACCEPT} in all), and a warning for a group far below "
                        "the majority; with --model, that model supplies what the drafter lacks")
    p.add_argument("--accept-files", type=int, default=ACCEPT_FILES, metavar="N",
                   help=f"files scored per group with --accept (default {ACCEPT_FILES})")
    p.add_argument("--vocab-mapping", metavar="FILE",
                   help="the drafter's vocab_mapping.pt (a path on the data's machine): adds the share of "
                        "loss tokens in the draft vocabulary (default: a vocab_mapping.pt found in the tree)")
    add_connection_arguments(p)


def run(args: argparse.Namespace) -> int:
    if (usage := below_one(args, "scan", "rows", "workers", "accept_files")) is not None:
        return usage
    return asyncio.run(_scan(args))


class _Progress:
    """One self-overwriting line on a terminal's stderr; nothing in logs and pipes."""

    def __init__(self) -> None:
        self.on = sys.stderr.isatty()
        self.shown = 0.0
        self.width = 0

    def update(self, p: dict[str, Any]) -> None:
        now = time.monotonic()
        if not self.on or now - self.shown < PROGRESS_EVERY:
            return
        self.shown = now
        secs = max(p.get("seconds") or 0, 1e-6)
        line = (
            f"scanning: {p['files_done']}/{p['files_total']}{'' if p.get('listing_done') else '+'} files, "
            f"{p['files_done'] / secs:.0f} files/s, {p['bytes_done'] / secs / 2**20:.1f} MiB/s"
        )
        if p.get("listing_done") and p["bytes_done"]:
            eta = (p["bytes_total"] - p["bytes_done"]) * secs / p["bytes_done"]
            line += f", ETA {eta:.0f} s"
        self._show(line)

    def note(self, line: str) -> None:
        """A line shown at once (a step that is slow per item, such as identifying)."""
        if self.on:
            self._show(line)

    def _show(self, line: str) -> None:
        self.width = max(self.width, len(line))
        sys.stderr.write("\r" + line.ljust(self.width))
        sys.stderr.flush()

    def clear(self) -> None:
        if self.on and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


async def _scan(args: argparse.Namespace) -> int:
    from eagle3_tui.commands._targets import explain_source_error, on_host, open_cli_source, say
    from eagle3_tui.dataset.scan import findings_for, full_record, scan_dataset
    from eagle3_tui.dataset.acceptance import format_acceptance
    from eagle3_tui.dataset.layers import format_layers
    from eagle3_tui.samples.results import blocking, sort_findings
    from eagle3_tui.dataset.cache import ScanCache
    from eagle3_tui.sources.base import SourceError
    from eagle3_tui.target import TargetError, parse_target

    started = time.monotonic()
    try:
        target = parse_target(args.target)
    except TargetError as err:
        say(f"scan: {err}")
        return 2
    try:  # a plain path, or `host:path` of the data's own host: a file on the data's machine
        vocab_mapping = on_host(args.vocab_mapping, target, "--vocab-mapping")
    except (SourceError, TargetError) as err:
        say(f"scan: {err}")
        return 2
    if vocab_mapping is not None and not target.is_remote:
        from eagle3_tui.samples.vocab import VocabError, load_mapping

        try:
            vocab_mapping = load_mapping(vocab_mapping).file
        except VocabError as err:
            say(f"scan: --vocab-mapping: {err}")
            return 2
    try:
        model = on_host(args.model, target, "--model")
        drafter_dir = on_host(args.drafter, target, "--drafter")
        accept_dir = on_host(args.accept, target, "--accept")
    except (SourceError, TargetError) as err:
        say(f"scan: {err}")
        return 2
    source = open_cli_source(target, args)
    cache = None
    if not args.no_cache:
        try:
            cache = ScanCache()
        except Exception as err:  # a broken cache slows the scan down, it must not stop it
            say(f"scan: record cache unavailable ({err}); scanning every file")

    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    records: list[dict[str, Any]] = []
    progress = _Progress()
    interrupted = False
    scanning = True

    def on_sigint() -> None:
        # While records come in, ctrl+c stops the scan. Once the scan is over (it may finish
        # just as the key is pressed) it only marks the result interrupted: the report is still
        # printed, never a KeyboardInterrupt traceback from the middle of the findings.
        nonlocal interrupted
        interrupted = True
        if scanning:
            task.cancel()

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    out = sys.stdout
    keep_open = False  # --model: the source stays open for the identify calls after the findings
    try:
        await source.connect()
        drafter = (drafter_dir, model) if drafter_dir else None
        scan = scan_dataset(source, target.path, full=args.full, rows=args.rows, workers=args.workers, cache=cache,
                            drafter=drafter, vocab_mapping=vocab_mapping, lazy=True)
        held: list[str] = []  # cached lines, written in batches: an unchanged dataset is mostly these
        try:
            async for item in scan:
                if "progress" in item:
                    progress.update(item["progress"])
                    continue
                records.append(item)
                if args.json:
                    held.append(_json_line(item))
                    if not item.get("cached") or len(held) >= 1000:  # fresh records stream as they finish
                        out.write("".join(held))
                        held.clear()
                        out.flush()
        finally:
            if held:
                out.write("".join(held))
            await scan.aclose()
        keep_open = bool(model or accept_dir)
    except asyncio.CancelledError:
        interrupted = True
        task.uncancel()
        scanning = False
    except SourceError as err:
        progress.clear()
        say(f"scan: {err}")
        explain_source_error(err)
        if cache is not None:
            cache.close()
        return 2
    finally:
        scanning = False
        if task.cancelling():  # ctrl+c after the last record, before this point
            task.uncancel()
        if not keep_open or interrupted:
            await source.close()
    progress.clear()

    try:
        findings = findings_for(source, target.path, records, None if interrupted else cache)
    except BaseException:
        if keep_open and not interrupted:
            await source.close()
        raise
    finally:
        if cache is not None:
            cache.close()
    layers = None
    scanned = findings  # the groups --accept scores: the scan's (the layers' findings name representatives)
    identifying = args.model and not interrupted
    if identifying:
        scanning = True  # ctrl+c now stops the identify calls
        layers, extra, interrupted = await _layers(source, target, records, findings, model, drafter_dir, progress,
                                                   close=not accept_dir)
        scanning = False
        findings = sort_findings([*findings, *extra])
    acceptance = None
    scoring = accept_dir and not interrupted
    if scoring:
        scanning = True  # ctrl+c now stops the scoring
        acceptance, extra, interrupted = await _acceptance(source, target, records, scanned, accept_dir, model,
                                                           args.accept_files, progress)
        scanning = False
        findings = sort_findings([*findings, *extra])
    elif accept_dir and keep_open:
        await source.close()  # ctrl+c before the scoring began (close is idempotent)
    summary = _summary(records, time.monotonic() - started, interrupted, args)
    if args.json:
        last = {"summary": summary, "findings": findings, **({"layers": layers[0]} if layers else {}),
                **({"acceptance": acceptance[0]} if acceptance else {})}
        out.write(json.dumps(to_json_ready(last)) + "\n")
    else:
        out.write(format_report([full_record(r) for r in records], findings, summary,
                                layers=layers and format_layers(layers[0], args.model, layers[1]),
                                acceptance=acceptance and format_acceptance(acceptance[0], args.accept, acceptance[2])) + "\n")
    out.flush()
    if interrupted and scoring:
        say(f"scan: interrupted; the acceptance covers {acceptance[3]} of the {acceptance[2]} files to score")
        return 130
    if interrupted and identifying:
        say(f"scan: interrupted; the layers cover {len(layers[0])} of the {layers[1]} files to identify")
        return 130
    if interrupted:
        say("scan: interrupted; the findings cover the files scanned so far")
        return 130
    return 1 if blocking(findings) else 0


async def _per_file_step(source, progress: _Progress, label: str, paths: list[str], run,
                         close: bool) -> tuple[list, bool]:
    """(results, interrupted) of a step run file by file on the source after the scan (identify,
    accept): the progress line says "label i/n: path", ctrl+c stops it and a lost connection ends
    it, and what was done by then counts; the source is closed afterwards when `close`."""
    from eagle3_tui.sources.base import SourceError

    results: list[dict[str, Any]] = []
    interrupted = False
    task = asyncio.current_task()

    def shown(i: int, n: int, path: str) -> None:
        progress.note(f"{label} {i}/{n}: {printable(path)}")

    try:
        await run(shown, results)
    except asyncio.CancelledError:
        interrupted = True
        task.uncancel()
    except SourceError as err:  # the connection went
        results.append({"path": paths[len(results)], "error": str(err)})
    finally:
        if task.cancelling():
            task.uncancel()
        if close or interrupted:
            await source.close()
        progress.clear()
    return results, interrupted


async def _layers(source, target, records, findings, model: str, drafter: str | None, progress: _Progress,
                  close: bool = True):
    """((layers entries, files planned), findings to add, interrupted) of `scan --model`: the
    representatives identified where the data is, the source closed afterwards."""
    from eagle3_tui.dataset.layers import choose, identify_picks, report

    picks = choose(records, findings)

    def run(shown, done):
        return identify_picks(source, target.path, picks, model=model, drafter=drafter, on_progress=shown, done=done)

    results, interrupted = await _per_file_step(source, progress, "identifying", [p["path"] for p in picks], run, close)
    entries, extra = report(picks, results, drafter)
    return (entries, len(picks)), extra, interrupted


async def _acceptance(source, target, records, findings, drafter: str, model: str | None, per_group: int,
                      progress: _Progress):
    """((entries, drafter, planned or None, files scored), findings to add, interrupted) of
    `scan --accept`: a few files per group scored where the data is, the source closed afterwards."""
    from eagle3_tui.dataset.acceptance import choose_files, report, score

    plan = choose_files(records, findings, per_group)
    paths = [p for g in plan for p in g["score"]]

    def run(shown, done):
        return score(source, target.path, plan, drafter=drafter, model=model, on_progress=shown, done=done)

    results, interrupted = await _per_file_step(source, progress, "scoring acceptance", paths, run, close=True)
    entries, extra = report(plan, results, drafter)
    return (entries, drafter, len(paths) if interrupted else None, len(results)), extra, interrupted


def _json_line(record: dict[str, Any]) -> str:
    raw = record.get("raw")
    if raw is not None and raw.endswith("}") and "NaN" not in raw and "Infinity" not in raw:
        # a lazy cached record: the stored line as json.dumps(decoded + cached) would write it
        return raw[:-1] + ', "cached": true}\n' if raw != "{}" else '{"cached": true}\n'
    if raw is not None:
        from eagle3_tui.dataset.scan import full_record

        record = full_record(record)
    # records hold finite floats (samples/scan.py): the C encoder alone, unless one does not
    try:
        return json.dumps(record, allow_nan=False) + "\n"
    except ValueError:
        return json.dumps(to_json_ready(record)) + "\n"


def _summary(records, seconds: float, interrupted: bool, args) -> dict[str, Any]:
    fresh = [r for r in records if not r.get("cached")]
    return {
        "files": len(records),
        "samples": sum("error" not in r for r in records),
        "errors": sum("error" in r and not r.get("not_sample") for r in records),
        "not_samples": sum(bool(r.get("not_sample")) for r in records),
        "cached": len(records) - len(fresh),
        "bytes_read": sum(r.get("bytes_read") or 0 for r in fresh),
        "bytes_total": sum(r.get("size") or 0 for r in records),
        "seconds": round(seconds, 3),
        "mode": "full" if args.full else f"quick ({args.rows} rows)",
        "interrupted": interrupted,
    }


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.3g}"


def format_report(records, findings, summary, layers: str | None = None, acceptance: str | None = None) -> str:
    lines = []
    if findings:
        lines.append("findings:")
        for f in findings:
            lines.append(f"  {f['severity'].upper():7} {f['code']}: {printable(f['message'])}")
    else:
        lines.append("findings: none")
    for section in (layers, acceptance):
        if section:
            lines += ["", *map(printable, section.splitlines())]
    shards: dict[str, list] = defaultdict(list)
    for r in records:
        shards[r.get("shard", "")].append(r)
    head = f"{'shard':<24} {'files':>6} {'ok':>6} {'err':>4} {'T':>7} {'valid':>7} {'k':>2} {'H':>6} {'dtype':<9} {'slot norms':<22} {'final':>7} {'NaN/Inf':>7}"
    lines += ["", head]
    from eagle3_tui.sources.base import natural_key

    for shard in sorted(shards, key=natural_key):
        rs = shards[shard]
        ok = [r for r in rs if "error" not in r]
        err = sum("error" in r and not r.get("not_sample") for r in rs)
        k = sorted({r["k"] for r in ok})
        h = sorted({r["hidden"] for r in ok})
        dt = sorted({r["dtype"] for r in ok})
        slot_norms = "-"
        final = None
        if ok and len(k) == 1:
            per = [[r["slots"][i]["norm_mean"] for r in ok if r["slots"][i]["norm_mean"] is not None] for i in range(k[0])]
            slot_norms = "/".join(_num(sum(v) / len(v)) if v else "-" for v in per)
            finals = [r["final"]["norm_mean"] for r in ok if r.get("final") and r["final"]["norm_mean"] is not None]
            final = sum(finals) / len(finals) if finals else None
        bad = sum(any(p["nan"] or p["inf"] for p in [*r["slots"], *([r["final"]] if r.get("final") else [])]) for r in ok)
        mean = (lambda key: sum(r[key] for r in ok) / len(ok)) if ok else (lambda key: None)
        lines.append(
            f"{printable(shard or '.')[:24]:<24} {len(rs):>6} {len(ok):>6} {err:>4} {_num(mean('tokens')):>7} "
            f"{_num(mean('valid_tokens')):>7} {','.join(map(str, k)) or '-':>2} {','.join(map(str, h)) or '-':>6} "
            f"{','.join(dt) or '-':<9} {slot_norms:<22} {_num(final):>7} {bad:>7}"
        )
    from eagle3_tui.samples.scan_accept import summary_line  # scan --drafter

    drafter_line = summary_line(records)
    if drafter_line:
        lines += ["", drafter_line]
    s = summary
    lines.append("")
    lines.append(
        f"{s['files']} files ({s['samples']} samples, {s['errors']} unreadable, {s['not_samples']} not samples, "
        f"{s['cached']} from cache), {s['mode']}, read {s['bytes_read'] / 2**20:.1f} of {s['bytes_total'] / 2**20:.1f} MiB "
        f"in {s['seconds']:.1f} s" + (" (interrupted)" if s["interrupted"] else "")
    )
    return "\n".join(lines)
