"""Files whose layer signature stands apart from the bulk of the dataset, in any order.

layer_group finds runs along the index order; a minority captured at other layers and scattered
among conversation-id names is no run. Each file's signature (the per-part norm ratios and
neighbouring-part cosines the scan measures) gets a robust multivariate distance from the bulk:

1. each feature is centred on its median and scaled by its MAD (robust z), clipped at +-50;
2. a covariance of the 75% of files closest to the centre (two concentration steps, as the
   minimum covariance determinant estimator does), so that correlated features count once;
3. squared distances rescaled so that their median is the chi-square median (the consistency
   step), then compared with the chi-square quantile at 1 - ALPHA / n: under a Gaussian bulk a
   clean dataset of any size raises the finding with probability ALPHA (Bonferroni);
4. the files beyond it are linked into clusters (files closer to each other than to the bulk),
   each cluster one finding with its files and their scores when its median file goes STAND times
   past the limit (ALONE times for a file alone): a clean dataset's tail reaches just past the
   limit, in scattered directions; files captured at other layers go far past it, together.

Measured on clean datasets in tests/scan/test_outliers.py (demo transformer, SpecForge and ModelOpt
layouts, six seeds each): no finding. A single file at other layers is told from an unusual
prompt only when it goes far out (ALONE); the files past the limit are the suspects that
`scan --model` identifies first (verify.py), which names such a file exactly. Pure Python: runs in the TUI's process, which never
imports torch.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import TypedDict

#: family-wise false-alarm rate for a clean dataset with a Gaussian bulk
ALPHA = 0.01
#: the share of files the covariance is estimated on
CORE = 0.75
#: below this many files the bulk is not told from a minority
MIN_FILES = 12
#: a cluster larger than this share of the files is no minority: the dataset has two groups
MINORITY = 0.35
#: a file alone (no other outlier near it) must go this much further than the limit: a clean
#: dataset's tail holds single odd files in scattered directions (an unusual prompt: on the demo
#: transformer up to 1.65x the limit; on SmolLM2-135M's own chats, a greedy answer stuck in a
#: loop, 2.04-2.10x, docs/scan.md), while a capture at other layers comes from a run and moves
#: its files together. A single file one boundary off reads 1.5-2.6x there: as far out as such
#: a prompt, so it is a suspect that `scan --model` identifies (verify.py), not a finding
ALONE = 3.0
#: two outlying files link when they depart from the centre in nearly the same direction (the
#: cosine of their whitened departures): a wrong capture moves its files the same way
LINK_COS = 0.8
#: a group is named when its median file goes this much further than the limit: a clean
#: dataset's tail reaches just past the limit, files at other layers go far past it (measured:
#: clean tails up to 1.1x the limit in groups and 1.25x alone, captures one boundary off 1.3-3x;
#: on SmolLM2-135M's chats clean groups up to 1.13x, groups one boundary deeper 1.88-3.68x)
STAND = 1.3


def chi2_quantile(p: float, k: int) -> float:
    """Wilson-Hilferty's approximation of the chi-square quantile (good to ~1% for k >= 2)."""
    z = NormalDist().inv_cdf(p)
    a = 2.0 / (9.0 * k)
    return k * max(0.0, 1.0 - a + z * math.sqrt(a)) ** 3


class Outliers(TypedDict):
    scores: list[float]  # per file, in robust SDs
    threshold: float  # the limit a file's score goes past
    alone: float  # the limit a single file (a cluster of one) must pass
    clusters: list[list[int]]  # file indices, each a group that stands out together


def outliers(values: list[list[float]]) -> Outliers | None:
    """{"scores": [per file, robust SD], "threshold", "clusters": [[file indices]]} or None when
    there are too few files or no feature varies. values: n x d, NaN where a file has none."""
    n = len(values)
    if n < MIN_FILES:
        return None
    z = _robust_z(values)
    if z is None:
        return None
    d = len(z[0])
    inv = _core_inverse(z)
    d2 = [_quad(row, inv) for row in z]
    med = sorted(d2)[n // 2]
    if med <= 0:
        return None
    scale = chi2_quantile(0.5, d) / med
    d2 = [v * scale for v in d2]
    limit = chi2_quantile(1.0 - ALPHA / n, d)
    out = [i for i in range(n) if d2[i] > limit]
    def stands(c: list[int]) -> bool:
        middle = sorted(d2[i] for i in c)[(len(c) - 1) // 2]  # the lower median
        return middle > limit * (STAND if len(c) > 1 else ALONE) ** 2

    clusters = [c for c in _clusters(out, z, inv) if stands(c)]
    return {"scores": [math.sqrt(v) for v in d2], "threshold": math.sqrt(limit),
            "alone": math.sqrt(limit) * ALONE, "clusters": clusters}


def _robust_z(values: list[list[float]]) -> list[list[float]] | None:
    cols = list(zip(*values, strict=False))
    keep, centre, spread = [], [], []
    for j, col in enumerate(cols):
        finite = sorted(v for v in col if v is not None and math.isfinite(v))
        if len(finite) < MIN_FILES:
            continue
        med = finite[len(finite) // 2]
        mad = sorted(abs(v - med) for v in finite)[len(finite) // 2] * 1.4826
        if mad <= 1e-12:
            mean = sum(finite) / len(finite)
            mad = math.sqrt(sum((v - mean) ** 2 for v in finite) / len(finite))
        if mad > 1e-12:
            keep.append(j)
            centre.append(med)
            spread.append(mad)
    if not keep:
        return None
    rows = []
    for row in values:
        zs = []
        for j, m, s in zip(keep, centre, spread, strict=False):
            v = row[j]
            zs.append(0.0 if v is None or not math.isfinite(v) else max(-50.0, min(50.0, (v - m) / s)))
        rows.append(zs)
    return rows


def _core_inverse(z: list[list[float]]) -> list[list[float]]:
    """The inverse covariance of the CORE share of files nearest the centre (two C-steps)."""
    n, d = len(z), len(z[0])
    core = sorted(range(n), key=lambda i: sum(v * v for v in z[i]))[: max(d + 2, int(CORE * n))]
    inv = _inverse(_covariance([z[i] for i in core]))
    for _ in range(2):
        core = sorted(range(n), key=lambda i: _quad(z[i], inv))[: max(d + 2, int(CORE * n))]
        inv = _inverse(_covariance([z[i] for i in core]))
    return inv


def _covariance(rows: list[list[float]]) -> list[list[float]]:
    n, d = len(rows), len(rows[0])
    mean = [sum(r[j] for r in rows) / n for j in range(d)]
    cov = [[0.0] * d for _ in range(d)]
    for r in rows:
        c = [r[j] - mean[j] for j in range(d)]
        for a in range(d):
            for b in range(a, d):
                cov[a][b] += c[a] * c[b]
    for a in range(d):
        for b in range(a, d):
            cov[a][b] = cov[b][a] = cov[a][b] / max(1, n - 1)
    ridge = 1e-6 * max(1e-12, sum(cov[a][a] for a in range(d)) / d)
    for a in range(d):
        cov[a][a] += ridge
    return cov


def _inverse(m: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan with partial pivoting (d is small: two features per slot)."""
    d = len(m)
    a = [row[:] + [1.0 if i == j else 0.0 for j in range(d)] for i, row in enumerate(m)]
    for col in range(d):
        piv = max(range(col, d), key=lambda r: abs(a[r][col]))
        a[col], a[piv] = a[piv], a[col]
        p = a[col][col] or 1e-30
        a[col] = [v / p for v in a[col]]
        for r in range(d):
            if r != col and a[r][col]:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=False)]
    return [row[d:] for row in a]


def _quad(x: list[float], inv: list[list[float]]) -> float:
    return sum(x[a] * sum(inv[a][b] * x[b] for b in range(len(x))) for a in range(len(x)))


def _clusters(out: list[int], z, inv) -> list[list[int]]:
    """Single linkage: two outlying files belong together when they depart from the bulk's centre
    in nearly the same direction (files moved the same way by the same wrong capture)."""
    own = {i: _quad(z[i], inv) for i in out}

    def near(i: int, j: int) -> bool:
        cross = sum(z[i][a] * sum(inv[a][b] * z[j][b] for b in range(len(z[j]))) for a in range(len(z[i])))
        return cross >= LINK_COS * math.sqrt(own[i] * own[j])

    groups: list[list[int]] = []
    for i in out:
        joined = [g for g in groups if any(near(i, j) for j in g)]
        merged = [i] + [j for g in joined for j in g]
        groups = [g for g in groups if g not in joined] + [sorted(merged)]
    return sorted(groups, key=lambda g: (-len(g), g[0]))


def exact_edges(values: list[list[float]], run: list[int]) -> list[int]:
    """A run found by the change-point search, with the files at each edge tested on their own:
    a neighbour whose signature sits nearer the run's centre than the rest's joins it, an edge
    file nearer the rest's leaves it (the search scores stretches, so a noisy last file could
    end a run one file early). Positions are indices into `values` (index order)."""
    z = _robust_z(values)
    if z is None or not run:
        return run
    n = len(z)
    inside = set(run)

    def centre(idx):
        idx = list(idx)
        return [sum(z[i][j] for i in idx) / len(idx) for j in range(len(z[0]))]

    def nearer_run(i, c_run, c_rest) -> bool:
        d_run = sum((a - b) ** 2 for a, b in zip(z[i], c_run, strict=False))
        d_rest = sum((a - b) ** 2 for a, b in zip(z[i], c_rest, strict=False))
        return d_run < d_rest

    for _ in range(n):
        rest = [i for i in range(n) if i not in inside]
        if not rest or len(inside) < 2:
            break
        c_run, c_rest = centre(inside), centre(rest)
        lo, hi = min(inside), max(inside)
        changed = False
        for i in (lo - 1, hi + 1):
            if 0 <= i < n and i not in inside and nearer_run(i, c_run, c_rest):
                inside.add(i)
                changed = True
        for i in (lo, hi):
            if len(inside) > 2 and i in inside and not nearer_run(i, c_run, c_rest):
                inside.discard(i)
                changed = True
        if not changed:
            break
    return sorted(inside)
