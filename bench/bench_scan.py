"""Dataset scan benchmarks (issue 11). Each side runs as a fresh process, page cache warm.

- scan_full_2000: `eagle3-tui scan --full` over 2,000 demo-sized files vs the bare loop
  `for f: torch.load(f, mmap=True, weights_only=True)` + per-slot norms in one process. Target 0.7.
- scan_quick_224mib: bytes of a 224 MiB sample a quick scan brings into the page cache (dropped
  first with posix_fadvise, counted after with mincore) vs the file size. Target 0.05.
- scan_cached_20000: a second scan of an unchanged 20,000-file dataset vs the first. Target 0.05.
Files are hard links of a few distinct samples made by the demo transformer (the scan opens each).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_BARE = """
import sys, os, time, torch
t0 = time.perf_counter()
for dirpath, _, names in os.walk(sys.argv[1]):
    for n in names:
        d = torch.load(os.path.join(dirpath, n), mmap=True, weights_only=True)
        aux, final = d["aux_hidden_state"][0], d["hidden_state"][0]
        h = final.shape[1]
        [aux[:, i * h:(i + 1) * h].float().norm(dim=-1).mean().item() for i in range(aux.shape[1] // h)]
        final.float().norm(dim=-1).mean().item()
print(time.perf_counter() - t0)
"""


def _env(cache: str | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if cache:
        env["EAGLE3_TUI_CACHE_DIR"] = cache
    return env


def _timed(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=False, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _dataset(root: Path, files: int, distinct: int, per_shard: int = 1000) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.scan.build import build

    seeds = root / "_seed"
    made = sorted(build(seeds, shards=1, per_shard=distinct).values())
    for i in range(files):
        shard = root / f"rows_{i // per_shard * per_shard}-{(i // per_shard + 1) * per_shard}"
        shard.mkdir(exist_ok=True)
        os.link(made[i % len(made)], shard / f"data_{i}.ckpt")
    for p in made:
        p.unlink()
    for d in sorted(seeds.rglob("*"), reverse=True):
        d.rmdir()
    seeds.rmdir()


def scan_full_2000() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ds"
        _dataset(root, 2000, 40)
        cache = str(Path(tmp) / "cache")
        bare = [sys.executable, "-c", _BARE, str(root)]
        ours = [sys.executable, "-m", "eagle3_tui", "scan", str(root), "--full", "--json", "--no-cache"]
        _timed(bare, _env())  # warm the page cache
        base = min(_timed(bare, _env()) for _ in range(2))
        fig = min(_timed(ours, _env(cache)) for _ in range(2))
    return {"figure": fig, "baseline": base, "unit": "s", "target": 0.7,
            "details": f"2000 files, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; both include process start"}


def _resident(path: str) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        # a private mapping is writable for ctypes yet reads nothing until touched; mincore
        # reports whether each page of the file is in the page cache
        m = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY)
        page = mmap.PAGESIZE
        pages = (size + page - 1) // page
        vec = (ctypes.c_ubyte * pages)()
        anchor = ctypes.c_char.from_buffer(m)
        libc.mincore(ctypes.c_void_p(ctypes.addressof(anchor)), ctypes.c_size_t(size), vec)
        del anchor
        count = sum(v & 1 for v in vec)
        m.close()
    return count * page


_QUICK = """
import sys
from eagle3_tui.samples.scan import scan_file
import os
r = scan_file(os.path.dirname(sys.argv[1]), os.path.basename(sys.argv[1]), os.path.getsize(sys.argv[1]), 0.0)
assert "error" not in r, r
print(r["bytes_read"])
"""


def scan_quick_224mib() -> dict:
    import torch

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data_0.ckpt")
        t, h, k = 4096, 7168, 3
        torch.save({"input_ids": torch.randint(1, 1000, (t,)), "loss_mask": torch.ones(t, dtype=torch.int64),
                    "aux_hidden_state": torch.randn(1, t, k * h).to(torch.bfloat16),
                    "hidden_state": torch.randn(1, t, h).to(torch.bfloat16)}, path)
        size = os.path.getsize(path)
        fd = os.open(path, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
        before = _resident(path)
        out = subprocess.run([sys.executable, "-c", _QUICK, path], env=_env(), capture_output=True, text=True)
        after = _resident(path)
    return {"figure": after - before, "baseline": size, "unit": "bytes", "target": 0.05,
            "details": f"{size / 2**20:.0f} MiB file; resident before {before}, after {after}; engine estimate {out.stdout.strip()} ({out.stderr.strip()[-200:]})"}


def scan_cached_20000() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ds"
        _dataset(root, 20_000, 40)
        cache = str(Path(tmp) / "cache")
        cmd = [sys.executable, "-m", "eagle3_tui", "scan", str(root), "--json"]
        first = _timed(cmd, _env(cache))
        second = min(_timed(cmd, _env(cache)) for _ in range(2))
    return {"figure": second, "baseline": first, "unit": "s", "target": 0.05,
            "details": f"20,000 files; load average {os.getloadavg()[0]:.1f}; both include process start (~2 s of torch import)"}


BENCHMARKS = {
    "scan_full_2000": scan_full_2000,
    "scan_quick_224mib": scan_quick_224mib,
    "scan_cached_20000": scan_cached_20000,
}
