"""The torch half of the `layer_group` finding (dataset/findings.py): the change-point
search and its permutation test over a matrix of per-file signatures.

It takes only numbers (one row of signature features per file, in index order, NaN where a file
has none, and a shard number per file) and gives back numbers (the runs found, their p-values and
effects), so it can run in another process: the TUI runs it in a child (`python -m
eagle3_tui.dataset.layer_group`, see dataset/findings_child.py) so that its own process never
imports torch (~200 MiB) for a remote dataset's findings. The CLI runs it in-process.

Child protocol: stdin is one JSON line {"n", "d"}, then n*d float64 (native order, row-major),
then n int64 shard numbers; stdout is one JSON line, the result of layer_runs().
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from eagle3_tui.engines.scan.local_run import one_torch_thread

if TYPE_CHECKING:
    from eagle3_tui.dataset.shapes import LayerRun, LayerRuns

#: files at each end of a run that layer_group may not split off (too few to judge)
MIN_RUN = 3
#: permutations per test; the smallest p-value is 1 / (PERMUTATIONS + 1)
PERMUTATIONS = 199
P_LIMIT = 0.01
#: run boundaries tried: every position in small datasets, else shard edges and a grid
MAX_CANDIDATES = 256


def layer_runs(raw: Any, shard_of: list[int]) -> LayerRuns:
    """raw: n x d float64 tensor of signature features (NaN: missing). Returns {"runs": [{"run":
    positions, "p", "col", "effect", "inside", "rest"}], "rest": files left outside every run}:
    each run is a stretch of rows whose mean departs from the rest's (the finding's numbers,
    computed here so that in-process and child give the same floats)."""
    import torch  # lazy: torch, only when a layer group is searched

    med = raw.nanmedian(dim=0).values
    raw = torch.where(torch.isnan(raw), med, raw)
    mad = (raw - med).abs().median(dim=0).values * 1.4826
    sd = raw.std(dim=0)
    scale = torch.where(mad > 1e-12, mad, sd)
    keep = scale > 1e-12
    if not bool(keep.any()):
        return {"runs": [], "rest": raw.shape[0]}
    # winsorised: one wild file (NaN rows, a broken capture) must not make a run on its own
    x = ((raw - med) / scale)[:, keep].clamp(-6.0, 6.0)
    cols = [i for i, k in enumerate(keep.tolist()) if k]
    gen = torch.Generator().manual_seed(0)

    alive = list(range(raw.shape[0]))
    groups: list[tuple[list[int], float]] = []
    for _ in range(6):
        if len(alive) < 2 * MIN_RUN:
            break
        sub = x[alive]
        cand = _candidates([shard_of[i] for i in alive])
        stat, a, b = _epidemic_max(sub, cand)
        if stat <= 0:
            break
        beaten = 0
        for _ in range(PERMUTATIONS):
            if _epidemic_max(sub[torch.randperm(len(alive), generator=gen)], cand)[0] >= stat:
                beaten += 1
                if (beaten + 1) / (PERMUTATIONS + 1) >= P_LIMIT:
                    break
        p = (beaten + 1) / (PERMUTATIONS + 1)
        if p >= P_LIMIT:
            break
        inside = set(range(a, b))
        group = [alive[i] for i in range(len(alive)) if (i in inside) == (b - a <= len(alive) - (b - a))]
        groups.append((group, p))
        taken = set(group)
        alive = [i for i in alive if i not in taken]

    runs: list[LayerRun] = []
    rest = alive
    for group, p in groups:
        for run in _runs(group):
            inside, others = x[run], x[rest]
            diff = inside.mean(0) - others.mean(0)
            j = int(diff.abs().argmax())
            effect = float(diff[j].abs())
            col = cols[j]
            runs.append({"run": run, "p": p, "col": col, "effect": effect,
                         "inside": float(raw[run, col].mean()), "rest": float(raw[rest, col].mean())})
    return {"runs": runs, "rest": len(rest)}


def _runs(positions: list[int]) -> list[list[int]]:
    """Consecutive stretches of sorted positions."""
    out: list[list[int]] = []
    for i in positions:
        if out and out[-1][-1] == i - 1:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def _candidates(shards: list[int]):
    import torch  # lazy: torch, only when a layer group is searched

    n = len(shards)
    if n + 1 <= MAX_CANDIDATES:
        return torch.arange(n + 1)
    edges = {0, n} | {i for i in range(1, n) if shards[i] != shards[i - 1]}
    if len(edges) > MAX_CANDIDATES // 2:
        edges = set(torch.linspace(0, n, MAX_CANDIDATES // 2).round().long().tolist())
    grid = set(torch.linspace(0, n, MAX_CANDIDATES - len(edges)).round().long().tolist())
    return torch.tensor(sorted(edges | grid))


def _epidemic_max(x, cand) -> tuple[float, int, int]:
    """max over runs [a, b) (a, b in cand) of m(n-m)/n * ||mean inside - mean outside||^2."""
    import torch  # lazy: torch, only when a layer group is searched

    n = x.shape[0]
    s = torch.cat([torch.zeros(1, x.shape[1], dtype=x.dtype), torch.cumsum(x, dim=0)])
    sc = s[cand]
    seg = sc[None, :, :] - sc[:, None, :]  # [a, b, d]: sum over [cand[a], cand[b])
    m = (cand[None, :] - cand[:, None]).to(x.dtype)
    ok = (m >= MIN_RUN) & (n - m >= MIN_RUN)
    mm = m.clamp(min=1)
    out_n = (n - m).clamp(min=1)
    diff = seg / mm[..., None] - (s[-1] - seg) / out_n[..., None]
    stat = torch.where(ok, mm * out_n / n * (diff**2).sum(-1), torch.full_like(m, -1.0))
    j = int(stat.argmax())
    ia, ib = divmod(j, len(cand))
    return float(stat.view(-1)[j]), int(cand[ia]), int(cand[ib])


def in_process(values: list[list[float]], shard_of: list[int]) -> LayerRuns:
    """layer_runs() here, on one torch thread (199 permutations of small tensors: more threads
    only spin)."""
    import torch  # lazy: torch, only when a layer group is searched


    with one_torch_thread():
        return layer_runs(torch.tensor(values, dtype=torch.float64), shard_of)


def main() -> None:
    import torch  # lazy: torch, only when a layer group is searched


    head = json.loads(sys.stdin.buffer.readline())
    n, d = head["n"], head["d"]
    data = sys.stdin.buffer.read()
    raw = torch.frombuffer(bytearray(data[: n * d * 8]), dtype=torch.float64).reshape(n, d)
    shard_of = torch.frombuffer(bytearray(data[n * d * 8:]), dtype=torch.int64).tolist()
    with one_torch_thread():
        result = layer_runs(raw, shard_of)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
