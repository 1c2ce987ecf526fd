"""One pass over a sample's rows (every row, or the rows a quick scan picked: row_reads.py): each
part's norms, the cosines between neighbouring parts and the NaN/Inf counts, every part in one
batched pass (rows_pass), or part by part when their widths differ (parts_apart). What a record
keeps of them: rows.py.

torch and the standard library only (numpy through the arrays torch makes; shipped to the remote
box by the agent).
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

#: elements per chunk in full mode (bounds the float32 buffer)
CHUNK_ELEMENTS = 1 << 21


def rows_pass(parts: Any, pick, t: int):
    """One pass over the rows (all of them, or `pick`) of P parts of equal width.

    Returns norms [P, R] (float32), the cosine between neighbouring parts per row [P-1, R]
    (None for one part), per part the NaN and Inf counts and the first row holding one, and
    the rows read as float32 [P, R, H] when they fit one chunk (else None). The norms and
    cosines are tensors, numpy arrays for a stacked [P, R, H] block (what prefix_summary reads).
    Full mode goes in chunks of rows so a 224 MiB sample never becomes a float32 copy at once.
    """
    # lazy: torch: loaded when used, never at start-up
    import torch

    stacked = isinstance(parts, torch.Tensor)  # [P, R, H] already (budget.Reader.block)
    n_parts, h = (parts.shape[0], parts.shape[2]) if stacked else (len(parts), parts[0].shape[1])
    n_rows = t if pick is None else pick.shape[0]
    step = max(1, CHUNK_ELEMENTS // max(h * n_parts, 1))
    if stacked:  # a quick scan's rows (budget.Reader.block): into the thread's scratch tensors
        chunk = _scratch_float(parts) if parts.dtype != torch.float32 else parts
        values = chunk.numpy()  # the norms and cosines as numpy arrays: prefix_summary's lists come from them
        n, dots = _norms_dots(values)
        norm_rows = n.tolist()
        flat = [v for row in norm_rows for v in row]
        finite = math.isfinite(sum(flat))  # (float32 norms: their sum in a double cannot overflow)
        nan, inf = [0] * n_parts, [0] * n_parts
        first: list[int | None] = [None] * n_parts
        if not finite:  # count them (_nonfinite's counts, on a numpy view: no torch kernel met for the first time)
            for i, row in enumerate(norm_rows):
                bad = [r for r, v in enumerate(row) if not math.isfinite(v)]
                if bad:
                    part = values[i]
                    nan[i] = int((part != part).sum())  # NaN alone is not itself
                    inf[i] = int((abs(part) == math.inf).sum())
                    first[i] = bad[0] if pick is None else int(pick[bad[0]])
        # the cosines' last three float32 operations in numpy, which rounds each as torch does
        cos = None if dots is None else _cosines(dots, n, finite and max(flat) < _PLAIN_NORM)
        return n, cos, nan, inf, first, None
    if n_rows <= step and len({x.dtype for x in parts}) == 1:
        # one chunk (every small file): no buffer, no copies into it, no slices to fill
        chunk = torch.stack(parts if pick is None else [x.index_select(0, pick) for x in parts]).float()
        n, dots = _tensors(_norms_dots(_numpy(chunk)))
        cos = None if dots is None else dots / (n[:-1] * n[1:]).clamp_min(1e-12)
        nan, inf, first = _nonfinite(chunk, n, 0, pick, [0] * n_parts, [0] * n_parts, [None] * n_parts)
        return n, cos, nan, inf, first, chunk
    norms = torch.empty(n_parts, n_rows, dtype=torch.float32)
    cos = torch.empty(n_parts - 1, n_rows, dtype=torch.float32) if n_parts > 1 else None
    nan, inf, first = [0] * n_parts, [0] * n_parts, [None] * n_parts
    buf = torch.empty(n_parts, min(step, n_rows), h, dtype=torch.float32)
    for r0 in range(0, n_rows, step):
        r1 = min(n_rows, r0 + step)
        chunk = buf[:, : r1 - r0]
        for i, x in enumerate(parts):
            # reads only these rows of the mapped file
            chunk[i].copy_(x[r0:r1] if pick is None else x.index_select(0, pick[r0:r1]))
        n, dots = _tensors(_norms_dots(_numpy(chunk)))
        norms[:, r0:r1] = n
        if cos is not None and dots is not None:
            cos[:, r0:r1] = dots / (n[:-1] * n[1:]).clamp_min(1e-12)
        _nonfinite(chunk, n, r0, pick, nan, inf, first)
    return norms, cos, nan, inf, first, None


def _norms_dots(rows):
    """(norms [P, R], dots of each part's rows with the next part's [P-1, R] or None) of float32
    rows [P, R, H] (numpy arrays, of torch's making: numpy is never imported here). Each value is
    one BLAS dot product (numpy's matmul of a row with a row), which depends on that row's values
    alone: the same bits for a row whichever rows are read with it, so a quick and a full scan
    agree on the rows both read. It is also closer to the exact value than torch's vector_norm
    (1e-7 against 7e-7 relative, on random rows against float64) and, for a quick scan's rows,
    half the time of vector_norm, the products and their sum: one pass over the float32 rows
    instead of four (~110 against ~220 us for a 64 MiB sample, caches cold).

    Under numpy's errstate for these products alone: a row of signalling NaNs (or Inf against
    -Inf, Inf against 0) raises the invalid flag, and numpy's "RuntimeWarning: invalid value
    encountered in matmul" reached the user's terminal; the values are the same, the caller counts
    them as NaN/Inf. numpy is the arrays' own module (sys.modules: torch's .numpy() loaded it)."""
    with sys.modules[type(rows).__module__].errstate(invalid="ignore", over="ignore"):
        n = (rows[..., None, :] @ rows[..., :, None])[..., 0, 0] ** 0.5  # (numpy's ** 0.5 is its sqrt)
        if rows.shape[0] < 2:
            return n, None
        a, b = rows[:-1], rows[1:]
        return n, (a[..., None, :] @ b[..., :, None])[..., 0, 0]


def _numpy(chunk):
    """A float32 tensor as a numpy array (a file's tensors may keep requires_grad)."""
    return (chunk.detach() if chunk.requires_grad else chunk).numpy()


def _tensors(arrays: tuple) -> tuple:
    # lazy: torch: loaded when used, never at start-up
    import torch

    return tuple(None if a is None else torch.from_numpy(a) for a in arrays)


#: per thread: the float32 rows of the last stacked pass, reused by the next one of the same
#: shape (a quick scan's files of one shard): no fresh megabyte to fault in and evict the caches
#: with, per file
_SCRATCH = threading.local()


def _scratch_float(parts):
    """parts.float() into the float32 tensor the last call of this shape and layout made (what
    .float() makes: the same strides, the same conversion, the same bits)."""
    held = getattr(_SCRATCH, "rows", None)
    if held is None or held.shape != parts.shape or held.stride() != parts.stride():
        held = _SCRATCH.rows = parts.float()
        if held.stride() != parts.stride():  # not the layout asked: never reused
            _SCRATCH.rows = None
        return held
    return held.copy_(parts)


#: norms below this: the product of two is a finite float32 (rows_pass's numpy path)
_PLAIN_NORM = 1e18


def _cosines(dots, n, plain: bool = True):
    """dots / (n[:-1] * n[1:]).clamp_min(1e-12) as torch computes it in float32, of numpy arrays.
    plain: the norms are finite and below _PLAIN_NORM (nothing overflows, no NaN): the product,
    the clamp and the quotient in numpy, each one correctly rounded IEEE float32 operation as in
    torch. Else in torch, where NaN, Inf and overflow need no warnings silenced."""
    if not plain:
        n, dots = _tensors((n, dots))
        m = n.shape[0] - 1
        return (dots / (n.narrow(0, 0, m) * n.narrow(0, 1, m)).clamp_min(1e-12)).numpy()
    den = n[:-1] * n[1:]
    return dots / den.clip(min=den.dtype.type(1e-12))


def _nonfinite(chunk, n, r0: int, pick, nan: list, inf: list, first: list):
    """Add the NaN/Inf counts (and first rows) of a chunk of rows starting at row r0."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    # norms are >= 0: their sum is finite exactly when they all are (or it overflowed: exact check)
    # (math.isfinite of the item: torch.isfinite on a single value costs ~20 us, several kernels)
    if not math.isfinite(n.sum().item()) and not bool(torch.isfinite(n).all()):
        for i in (~torch.isfinite(n)).any(dim=1).nonzero().flatten().tolist():
            nan[i] += int(torch.isnan(chunk[i]).sum())
            inf[i] += int(torch.isinf(chunk[i]).sum())
            if first[i] is None:
                at = r0 + int((~torch.isfinite(n[i])).nonzero()[0, 0])
                first[i] = at if pick is None else int(pick[at])
    return nan, inf, first


def parts_apart(parts: list, pick, t: int, n_slots: int, has_final: bool):
    """rows_pass for parts of different widths: one part at a time, and the cosine only
    between neighbours that share a width (NaN where they do not)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    n_rows = t if pick is None else len(pick)
    norms = torch.empty(len(parts), n_rows, dtype=torch.float32)
    cos = torch.full((max(len(parts) - 1, 0), n_rows), math.nan) if len(parts) > 1 else None
    nan, inf, first = [], [], []
    for i, x in enumerate(parts):
        n, _, a, b, c, _ = rows_pass([x], pick, t)
        norms[i] = n[0]
        nan.append(a[0])
        inf.append(b[0])
        first.append(c[0])
    for i in range(len(parts) - 1):
        if parts[i].shape[1] == parts[i + 1].shape[1]:
            _, c, *_ = rows_pass([parts[i], parts[i + 1]], pick, t)
            if cos is not None:
                cos[i] = c[0]
    return norms, cos, nan, inf, first, None


def all_finite(norms, cos) -> bool:
    """Every norm and cosine is finite (one reduction: a NaN or Inf anywhere makes the sum one;
    a sum that overflows only sends the caller down the exact, slower path)."""
    total = norms.sum().item() if cos is None else norms.sum().item() + cos.sum().item()
    return math.isfinite(total)
