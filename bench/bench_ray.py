"""`scan --ray` benchmark (issue 25): the quick scan of 2,000 demo-sized files on a 2-node local
Ray cluster (1 CPU each, loopback, started here and stopped after) vs the local scan of the same
files in the same run. Target: ratio <= 1.5 (Ray's overhead).

Both sides are fresh `eagle3-tui scan --json --no-cache` processes, interleaved REPS times
(env EAGLE3_BENCH_REPS, default 3); medians. The details split the Ray side: connecting to the
cluster (ray.init with the package shipped as a py_module), the scan as the JSON summary times
it, and the per-file rate, from which docs/scale.md projects N nodes.

- scan_ray_2000: as above.
- scan_ray_real: the same comparison where Ray's fixed cost is small beside the work (issue 46):
  EAGLE3_BENCH_RAY_FILES (default 20,000) real-size samples (T 2,048, H 4,096, bf16, 64 MiB in
  SpecForge's layout: 40 written by tests/helpers/real_size.py, hard-linked to N names in shards
  of 2,000; each a real 64 MiB file, read within the quick scan's budget), in a temporary folder
  removed after. Target 1.3.
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from bench_scan import DEFAULT_ROWS, REPS, _dataset, _env, _interleaved, _timed

_CONNECT = """
import sys, time
t0 = time.perf_counter()
from eagle3_tui.dataset.ray_runner import connect
connect(sys.argv[1])
print(time.perf_counter() - t0)
"""


def _scan_seconds(cmd: list[str], env: dict) -> float:
    """The scan's own seconds, as its JSON summary gives them."""
    out = subprocess.run(cmd, env=env, check=False, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["summary"]["seconds"]


def _ray_against_local(root: Path, cache: str, address: str) -> tuple[dict, list[str], list[str]]:
    """Whole `scan` CLI runs on the cluster and locally, interleaved; and the two commands."""
    local = [sys.executable, "-m", "eagle3_tui", "scan", str(root), "--json", "--no-cache"]
    ray = [*local, "--ray", address]
    _timed(ray, _env(cache))  # the first job uploads the package: not what a user pays twice
    return _interleaved(lambda: _timed(ray, _env(cache)), lambda: _timed(local, _env(cache))), local, ray


def scan_ray_2000() -> dict:
    from tests.helpers.ray_cluster import local_cluster

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ds"
        _dataset(root, 2000, 40)
        cache = str(Path(tmp) / "cache")
        with local_cluster(workers=1) as cluster:
            r, local, ray = _ray_against_local(root, cache, cluster.address)
            connects = [float(subprocess.run([sys.executable, "-c", _CONNECT, cluster.address], env=_env(cache),
                                             check=False, capture_output=True, text=True).stdout.strip() or "nan")
                        for _ in range(REPS)]
            inside = [_scan_seconds(ray, _env(cache)) for _ in range(REPS)]
            inside_local = [_scan_seconds(local, _env(cache)) for _ in range(REPS)]
    connect, scan_ray, scan_local = map(statistics.median, (connects, inside, inside_local))
    return {"figure": r["figure"], "baseline": r["baseline"], "unit": "s", "target": 1.5,
            "details": f"2000 files of ~100 KiB, quick ({DEFAULT_ROWS} rows), 2 nodes x 1 CPU on loopback ({os.cpu_count()} "
                       f"cores shared); {r['text']}; connecting to the cluster alone {connect:.2f} s (median); "
                       f"the scan as its summary times it: Ray {scan_ray:.2f} s ({2000 / scan_ray:.0f} files/s) vs "
                       f"local {scan_local:.2f} s ({2000 / scan_local:.0f} files/s)"}


def scan_ray_real() -> dict:
    from tests.helpers.ray_cluster import local_cluster
    from tests.helpers.real_size import write_dataset

    files = int(os.environ.get("EAGLE3_BENCH_RAY_FILES", "20000"))
    with tempfile.TemporaryDirectory() as tmp:
        seeds = Path(tmp) / "seeds"
        write_dataset(seeds, files=40, duplicate=None, nan_file=None)
        made = sorted(seeds.rglob("*.ckpt"))
        root = Path(tmp) / "ds"
        for i in range(files):
            shard = root / f"rows_{i // 2000 * 2000}-{(i // 2000 + 1) * 2000}"
            shard.mkdir(parents=True, exist_ok=True)
            os.link(made[i % len(made)], shard / f"data_{i}.ckpt")
        cache = str(Path(tmp) / "cache")
        with local_cluster(workers=1) as cluster:
            r, _local, _ray = _ray_against_local(root, cache, cluster.address)
    return {"figure": r["figure"], "baseline": r["baseline"], "unit": "s", "target": 1.3,
            "details": f"{files:,} real-size files (64 MiB, T 2,048, H 4,096, bf16; 40 distinct, hard-linked), quick scan "
                       f"within its 512 KiB budget, whole CLI runs, 2 Ray nodes x 1 CPU on loopback ({os.cpu_count()} cores "
                       f"shared) vs the local scan (2 workers); {r['text']}"}


BENCHMARKS = {"scan_ray_2000": scan_ray_2000, "scan_ray_real": scan_ray_real}

if __name__ == "__main__":
    t0 = time.perf_counter()
    print(scan_ray_2000(), time.perf_counter() - t0)
