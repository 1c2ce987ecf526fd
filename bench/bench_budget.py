"""Real-size scan benchmarks (issue 25.2): N samples of T 2,048, H 4,096, 3 slots, bf16 in SpecForge's
layout (64 MiB each; N = 40 by default, ~2.6 GB), written into a temporary folder that is removed
afterwards (tests/helpers/real_size.py: a group of 4 files at other layers, 3 padded files, a
duplicate, a NaN in row 0 of one file).

- scan_real_quick_vs_full: the quick scan (default budget, 512K a file) vs the full scan of the same
  files in the same run, warm page cache, each side in a fresh process timed after its torch import
  (scan_tree with one worker, then the findings); median of EAGLE3_BENCH_REPS (default 5)
  interleaved pairs. Target 0.1. The details give bytes and CPU ms per file (all files, the first
  file alone, each file after it: what a worker pays once and what every further file costs), the cold figures
  (page cache dropped with /proc/sys/vm/drop_caches where permitted, else file by file with
  posix_fadvise, said which), whether both depths found the same, and the projection to 100,000
  files at the disk's measured bandwidth and this machine's cores (each file after the first at the
  steady cost, the first file's extra once a core).
  Then the same number of files batched as SpecForge's pipeline writes real chats
  (tests/helpers/real_size.py write_batched: T varies by batch of 4, valid rows by file), each file
  its own layout: the quick scan's CPU a file there too (warm, median of EAGLE3_BENCH_REPS).
- scan_real_bytes_per_file: the bytes a quick scan read per file (counted by the scan) vs the
  budget. Target 1.0.

N: EAGLE3_BENCH_REAL_FILES, or `python bench/bench_budget.py --files N`; scaled down (and said
so) when the temporary folder's disk has less than N x 64 MiB plus 2 GiB free.

EAGLE3_BENCH_AGAINST=/path/to/another/checkout (main, say): each warm quick run of this code is
followed by one of that checkout's (the same engine script, its package on PYTHONPATH), and the
details give both CPU figures a file and the per-pair ratios: on a shared machine only runs
interleaved under the same load compare.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPS = int(os.environ.get("EAGLE3_BENCH_REPS", "5"))
FILE_BYTES = 64 << 20
PROJECT_FILES = 100_000

_ENGINE = """
import json, sys, time
import torch
from eagle3_tui.dataset.findings import dataset_findings
from eagle3_tui.engines.scan.records import scan_tree
root, full = sys.argv[1], sys.argv[2] == "full"
t0, c0 = time.perf_counter(), time.process_time()
records = []
for r in scan_tree(root, full=full, workers=1):
    records.append(r)
    if len(records) == 1:  # the listing and the first file: torch's first calls, buffers faulted in
        cpu_first = time.process_time() - c0
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
found = {}
for f in dataset_findings(records):
    paths = f.get("paths") or sorted(p for g in f.get("groups") or [] for p in g)
    found[f["code"]] = sorted(paths)
import eagle3_tui
print(json.dumps({"wall": wall, "cpu": cpu, "cpu_first": cpu_first, "files": len(records), "bytes": sum(r.get("bytes_read") or 0 for r in records),
                  "rows": [r.get("rows_read") for r in records], "found": found, "code": eagle3_tui.__file__}))
"""


AGAINST = os.environ.get("EAGLE3_BENCH_AGAINST")


def _env(code: Path | str = ROOT) -> dict:
    return {**os.environ, "PYTHONPATH": str(code)}


def _engine(root: Path, depth: str, code: Path | str = ROOT) -> dict:
    # run from the dataset's folder: `python -c` puts the working directory first on sys.path, where
    # a checkout's own eagle3_tui would shadow the one on PYTHONPATH
    out = subprocess.run([sys.executable, "-c", _ENGINE, str(root), depth], env=_env(code), capture_output=True,
                         text=True, check=True, cwd=str(root))
    return json.loads(out.stdout.splitlines()[-1])


def drop_caches(files: list[Path]) -> str:
    """Drop the files from the page cache; how it was done."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as fh:
            fh.write("3\n")
        return "page cache dropped (/proc/sys/vm/drop_caches)"
    except OSError:
        for f in files:
            fd = os.open(f, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        return "drop_caches not permitted: the files dropped one by one (posix_fadvise DONTNEED)"


def _bandwidth(files: list[Path]) -> float:
    """Bytes/s of a cold sequential read of a few files (8 MiB reads)."""
    some = files[: max(2, min(6, len(files)))]
    drop_caches(some)
    total, t0 = 0, time.perf_counter()
    for f in some:
        with open(f, "rb", buffering=0) as fh:
            while chunk := fh.read(8 << 20):
                total += len(chunk)
    return total / (time.perf_counter() - t0)


def _files_that_fit(asked: int, folder: str) -> tuple[int, str]:
    free = shutil.disk_usage(folder).free
    fit = int((free - (2 << 30)) // FILE_BYTES)
    if fit >= asked:
        return asked, ""
    n = max(8, fit)
    return n, f" (scaled down from {asked}: {free / 2**30:.1f} GiB free in {folder})"


_RESULT: dict = {}


def _measure() -> dict:
    if _RESULT:
        return _RESULT
    sys.path.insert(0, str(ROOT))
    from tests.helpers.real_size import write_batched, write_dataset

    asked = int(os.environ.get("EAGLE3_BENCH_REAL_FILES", "40"))
    tmp_root = tempfile.gettempdir()
    n, scaled = _files_that_fit(asked, tmp_root)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ds"
        t0 = time.perf_counter()
        write_dataset(root, files=n, duplicate=(2, n - 3), nan_file=n - 2)
        files = sorted(root.rglob("*.ckpt"))
        made = time.perf_counter() - t0
        bandwidth = _bandwidth(files)
        how = drop_caches(files)
        cold = {"quick": _engine(root, "quick")}
        drop_caches(files)
        cold["full"] = _engine(root, "full")
        load0 = os.getloadavg()[0]
        warm: dict[str, list] = {"quick": [], "full": [], "against": []}
        for _ in range(REPS):  # the cold full run left every file in the page cache
            for depth in ("full", "quick"):
                warm[depth].append(_engine(root, depth))
            if AGAINST:
                warm["against"].append(_engine(root, "quick", AGAINST))
        load1 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:  # (the first folder is gone: its disk is free again)
        root = Path(tmp) / "batched"
        write_batched(root, files=n)
        batched = [_engine(root, "quick") for _ in range(REPS)]
    _RESULT.update(n=n, scaled=scaled, made=made, bandwidth=bandwidth, how=how, cold=cold, warm=warm,
                   loads=(load0, load1), batched=batched)
    return _RESULT


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _steady(runs: list[dict], n: int) -> float:
    """CPU seconds a file after the first (the listing, torch's first calls and the scratch buffers
    faulted in cost a process ~4 ms once: spread over 40 files that is 0.1 ms a file, over 100,000
    files nothing)."""
    return statistics.median((x["cpu"] - x["cpu_first"]) / (n - 1) for x in runs) if n > 1 else _median(runs, "cpu")


def _batched(r: dict) -> str:
    """The quick scan's CPU on files as SpecForge batches them (T varies by batch, valid rows by file)."""
    runs, n = r["batched"], r["n"]
    cores = os.cpu_count() or 1
    steady = _steady(runs, n)
    return (f"files batched as SpecForge writes them (T 1,024-2,048 by batch of 4, 3 of 4 padded): quick "
            f"{_median(runs, 'bytes') / n / 2**10:.0f} KiB read, {_median(runs, 'cpu') / n * 1000:.2f} ms CPU a file "
            f"(the first file {_median(runs, 'cpu_first') * 1000:.1f} ms, each other {steady * 1000:.2f} ms: "
            f"{PROJECT_FILES * steady / cores:,.0f} s of CPU for {PROJECT_FILES:,} over {cores} cores)")


def _projection(r: dict) -> str:
    cores = os.cpu_count() or 1
    bw = r["bandwidth"]
    parts = []
    for depth in ("quick", "full"):
        per_file = r["cold"][depth]["bytes"] / r["n"]
        # each worker pays the first file's extra once; the other files cost the steady figure
        cpu = _steady(r["warm"][depth], r["n"])
        once = _median(r["warm"][depth], "cpu_first") - cpu
        io_s = PROJECT_FILES * per_file / bw
        cpu_s = (PROJECT_FILES * cpu + cores * once) / cores
        parts.append(f"{depth}: {PROJECT_FILES * per_file / 2**30:,.1f} GiB read, {io_s:,.0f} s at {bw / 2**20:,.0f} MiB/s, "
                     f"{cpu_s:,.0f} s of CPU over {cores} cores -> ~{max(io_s, cpu_s):,.0f} s"
                     f" ({'fits' if max(io_s, cpu_s) <= 60 else 'does not fit'} in 60 s here)")
    return f"projection to {PROJECT_FILES:,} files: " + "; ".join(parts)


def scan_real_quick_vs_full() -> dict:
    r = _measure()
    n = r["n"]
    q, f = _median(r["warm"]["quick"], "wall"), _median(r["warm"]["full"], "wall")
    same = r["warm"]["quick"][0]["found"] == r["warm"]["full"][0]["found"]
    spread = lambda d: f"{min(x['wall'] for x in r['warm'][d]):.2f}..{max(x['wall'] for x in r['warm'][d]):.2f}"
    rows = r["warm"]["quick"][0]["rows"]
    details = (
        f"{n} files of 64 MiB{r['scaled']} (written in {r['made']:.0f} s); warm, median of {REPS}: quick {q:.2f} s "
        f"({spread('quick')}) vs full {f:.2f} s ({spread('full')}); per file: quick "
        f"{r['warm']['quick'][0]['bytes'] / n / 2**10:.0f} KiB read, {min(rows)}..{max(rows)} rows a part, "
        f"{_median(r['warm']['quick'], 'cpu') / n * 1000:.2f} ms CPU (the first file "
        f"{_median(r['warm']['quick'], 'cpu_first') * 1000:.1f} ms, each other "
        f"{_steady(r['warm']['quick'], n) * 1000:.2f} ms), {q / n * 1000:.1f} ms wall; full "
        f"{r['warm']['full'][0]['bytes'] / n / 2**20:.0f} MiB read, {_median(r['warm']['full'], 'cpu') / n * 1000:.0f} ms CPU, "
        f"{f / n * 1000:.0f} ms wall; cold ({r['how']}): quick {r['cold']['quick']['wall']:.2f} s "
        f"({r['cold']['quick']['wall'] / n * 1000:.1f} ms a file), full {r['cold']['full']['wall']:.2f} s "
        f"({r['cold']['full']['wall'] / n * 1000:.0f} ms a file, {r['cold']['full']['bytes'] / r['cold']['full']['wall'] / 2**20:.0f} MiB/s); "
        f"disk: {r['bandwidth'] / 2**20:.0f} MiB/s sequential cold; findings {'the same' if same else 'DIFFERENT'} "
        f"({', '.join(sorted(r['warm']['quick'][0]['found']))}); {_projection(r)}; {_batched(r)}; load average "
        f"{r['loads'][0]:.1f} -> {r['loads'][1]:.1f}, {os.cpu_count()} cores"
    )
    if r["warm"]["against"]:
        ours = [x["cpu"] / n * 1000 for x in r["warm"]["quick"]]
        theirs = [x["cpu"] / n * 1000 for x in r["warm"]["against"]]
        pairs = sorted(a / b for a, b in zip(ours, theirs))
        same_found = all(x["found"] == r["warm"]["quick"][0]["found"] and x["bytes"] == r["warm"]["quick"][0]["bytes"]
                         for x in r["warm"]["against"])
        details += (f"; against {r['warm']['against'][0]['code']} (interleaved): quick CPU a file {statistics.median(ours):.2f} ms "
                    f"({min(ours):.2f}..{max(ours):.2f}) vs {statistics.median(theirs):.2f} ms ({min(theirs):.2f}.."
                    f"{max(theirs):.2f}), ratio {statistics.median(pairs):.2f} (pairs {pairs[0]:.2f}..{pairs[-1]:.2f}), "
                    f"findings and bytes read {'the same' if same_found else 'DIFFERENT'}")
    return {"figure": q, "baseline": f, "unit": "s", "target": 0.1, "details": details}


def scan_real_bytes_per_file() -> dict:
    r = _measure()
    per = r["cold"]["quick"]["bytes"] / r["n"]
    return {"figure": per, "baseline": 512 << 10, "unit": "bytes", "target": 1.0,
            "details": f"bytes a quick scan read per 64 MiB file (counted by the scan), default budget 512 KiB; "
                       f"{r['n']} files"}


BENCHMARKS = {
    "scan_real_quick_vs_full": scan_real_quick_vs_full,
    "scan_real_bytes_per_file": scan_real_bytes_per_file,
}


if __name__ == "__main__":
    if "--files" in sys.argv:
        os.environ["EAGLE3_BENCH_REAL_FILES"] = sys.argv[sys.argv.index("--files") + 1]
    for name, fn in BENCHMARKS.items():
        res = fn()
        print(f"{name}: {res['figure']:.4g} {res['unit']} vs {res['baseline']:.4g} -> ratio "
              f"{res['figure'] / res['baseline']:.3f} (target {res['target']})\n    {res['details']}", flush=True)
