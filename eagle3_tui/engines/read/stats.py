"""Per-slot summaries of a Sample: per-token L2 norms, element stats, NaN/Inf, first-k values.

Runs on the remote box too (shipped by the agent): torch and the standard library only.
Big slots are processed in row chunks so that no float32 copy of a whole slot is made.
Norms and element stats are taken over the valid rows (padding excluded); NaN/Inf are
counted over every row. Non-finite results are returned as None (JSON null).
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from typing import Any, cast

from eagle3_tui.engines.read.final_label import checked_label
from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.sample import NotASample, Sample, Slot
from eagle3_tui.engines.read.vocab_file import VocabError, describe_file
from eagle3_tui.engines.results.errors import Cancelled, ErrorResult, error_result
from eagle3_tui.engines.results.summary import Summary

#: elements per chunk: bounds the temporary memory, big enough to amortise per-call overhead
CHUNK_ELEMENTS = 1 << 22
#: per-token values one summary lists at most (about 20 MB of JSON); longer files are cut
PER_TOKEN_VALUES = 1 << 21


def _not_sample(path: str, err: NotASample) -> ErrorResult:
    result = cast(dict, error_result(path, err))
    if {"d2t", "t2d"} <= set(err.contents):  # a draft vocabulary: say what it holds
        try:
            result["vocab_mapping"] = describe_file(path)
        except VocabError as bad:
            result["vocab_mapping_error"] = str(bad)
    return cast(ErrorResult, result)


def summarize_file(
    path: str,
    *,
    k: int = 5,
    slots: int | None = None,
    hidden: int | None = None,
    cancel: threading.Event | None = None,
) -> Summary:
    """Summary JSON object for one file; file problems become {"path", "error"}."""
    try:
        sample = load_sample(path, slots=slots, hidden=hidden)
        return summarize(sample, k=k, cancel=cancel)
    except NotASample as err:
        return cast(Summary, _not_sample(path, err))
    except Cancelled:
        raise
    except Exception as err:  # noqa: BLE001 - ours and, as a last resort, any other: one line
        return cast(Summary, error_result(path, err))


_threads_lock = threading.Lock()
_threads_users = 0
_threads_saved = 0


@contextmanager
def _one_torch_thread():
    """Reduce on one intra-op thread. Each chunk is a handful of memory-bound reductions; with
    two threads every one of them waits for both, and on a loaded machine the other thread is
    often descheduled: a 224 MiB sample took 2.3 s on two threads and 0.2 s on one (load 7 on
    2 cores; bench/bench_summary.py). Counted, so summaries running in parallel threads restore
    the setting only when the last one ends."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    global _threads_users, _threads_saved
    with _threads_lock:
        if _threads_users == 0:
            _threads_saved = torch.get_num_threads()
            torch.set_num_threads(1)
        _threads_users += 1
    try:
        yield
    finally:
        with _threads_lock:
            _threads_users -= 1
            if _threads_users == 0:
                torch.set_num_threads(_threads_saved)


def summarize(sample: Sample, *, k: int = 5, cancel: threading.Event | None = None) -> Summary:
    with _one_torch_thread():
        return _summarize(sample, k=k, cancel=cancel)


def _summarize(sample: Sample, *, k: int, cancel: threading.Event | None) -> Summary:
    t = sample.tokens
    valid = sample.valid_len
    parts = len(sample.slots) + (sample.final is not None)
    # per-token lists (norms, first-k, ids, mask) are cut to a budget of values, so that a
    # sequence of millions of tokens gives a bounded JSON line and a bounded panel
    listed = min(t, max(1, PER_TOKEN_VALUES // (parts * (1 + k) + 2)))
    slots = [
        _slot_summary(s, i, k=k, valid=valid, listed=listed, cancel=cancel)
        for i, s in enumerate(sample.slots)
    ]
    final = (
        _slot_summary(sample.final, None, k=k, valid=valid, listed=listed, cancel=cancel)
        if sample.final is not None
        else None
    )
    ids_t, mask_t = sample.ids, sample.loss_mask
    ids = ids_t[:listed].tolist() if ids_t is not None else None
    mask = mask_t[:listed].tolist() if mask_t is not None else None

    warnings: list[str] = []
    if listed < t:
        warnings.append(
            f"per-token values (norms, first {k}, ids, mask) list the first {listed} of {t} tokens; "
            "the statistics cover them all"
        )
    pad = t - valid
    pad_nonzero = any(part.pop("_pad_nonzero") for part in [*slots, *([final] if final else [])])
    if pad and pad_nonzero:
        warnings.append(
            f"{pad} padding rows (ids 0, loss mask 0) carry non-zero hidden states: "
            "exclude them when comparing"
        )
    if ids_t is not None and mask_t is not None and not pad:
        nonzero = (ids_t != 0).nonzero()
        kept = int(nonzero[-1, 0]) + 1 if len(nonzero) else 0
        zero_tail = t - kept
        if zero_tail >= 2 and bool(mask_t[kept:].any()):
            warnings.append(
                f"the last {zero_tail} rows have id 0 but loss mask 1: padding taken for real tokens?"
            )
    if mask_t is not None and not bool(mask_t[:valid].any()):
        warnings.append("loss mask is 0 on every token: this sample trains nothing")
    for part in [*slots, *([final] if final else [])]:
        if part["nan"] or part["inf"]:
            warnings.append(
                f"{part['label']}: {part['nan']} NaN and {part['inf']} Inf values, "
                f"first in row {part['first_nonfinite_row']}"
            )

    final_norm, doubt = sample.final_norm, None
    if final is not None:
        final_norm, doubt = checked_label(sample.final_norm, final["norms"][:valid], [s["norms"][:valid] for s in slots])
        if doubt:
            warnings.append(doubt)

    result = {
        "path": sample.path,
        "schema": sample.schema,
        "tokens": t,
        "valid_tokens": valid,
        "hidden": sample.hidden,
        "dtype": sample.dtype,
        "k": len(slots),
        "first_k": k,
        "slots": slots,
        "final": final,
        "final_norm": final_norm,
        "ids": ids,
        "mask": mask,
        "loss_mask": {"ones": int((mask_t != 0).sum()), "total": t} if mask_t is not None else None,
        "padding": {"trailing": pad, "nonzero_hidden": pad_nonzero},
        "source_keys": dict(sample.source_keys),
        "assumptions": list(sample.assumptions),
        "warnings": warnings,
    }
    if listed < t:
        result["listed_tokens"] = listed
    return cast(Summary, result)


def _slot_summary(
    slot: Slot, index: int | None, *, k: int, valid: int, listed: int, cancel: threading.Event | None
) -> dict[str, Any]:
    # lazy: torch: loaded when used, never at start-up
    import torch

    x = slot.tensor
    rows, width = x.shape
    step = max(1, CHUNK_ELEMENTS // max(width, 1))
    # float64 data keeps float64: its values may lie beyond float32's range (1e300 is finite)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    norms = torch.empty(rows, dtype=torch.float64)
    tally = _Tally()

    # Each chunk is copied into one float32 buffer, then reduced there: bf16 reductions on the CPU
    # are several times slower than a conversion plus float32 reductions. The buffer bounds the
    # extra memory at CHUNK_ELEMENTS floats, instead of a float32 copy of the whole slot.
    # Variance comes from sums of squares (the row norms, accumulated scaled by their maximum so
    # that huge values do not overflow): relative error ~1e-6 of E[x^2] on float32 data, plenty
    # for hidden states whose mean is small next to their spread.
    buf = torch.empty((min(step, rows), width), dtype=work)
    for r0 in range(0, rows, step):
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        r1 = min(rows, r0 + step)
        chunk = buf[: r1 - r0]
        chunk.copy_(x[r0:r1])
        stat_rows = max(0, min(r1, valid) - r0)
        if not tally.finite_chunk(chunk, stat_rows, norms[r0:r1]):
            tally.nonfinite_chunk(chunk, r0, stat_rows, norms[r0:r1])

    valid_norms = norms[:valid]
    finite_norms = valid_norms[torch.isfinite(valid_norms)]
    mean, std = tally.acc.mean_std()
    lo, hi = (tally.lo, tally.hi) if tally.acc.count else (None, None)
    first = x[:listed, : max(0, min(k, width))].to(work)
    top = float(finite_norms.max()) if finite_norms.numel() else 0.0
    norm_mean = float((finite_norms / top).mean()) * top if top > 0 else 0.0
    any_norm = bool(finite_norms.numel())

    return {
        "index": index,
        "label": slot.label,
        "boundary": slot.boundary,
        "boundary_note": slot.boundary_note,
        "dtype": str(x.dtype).removeprefix("torch."),
        "norms": _finite_list(norms[:listed] if work == torch.float64 else norms[:listed].float()),
        "norm_mean": _finite(norm_mean) if any_norm else None,
        "norm_min": _finite(float(finite_norms.min())) if any_norm else None,
        "norm_max": _finite(top) if any_norm else None,
        "mean": _finite(mean),
        "std": _finite(std),
        "min": _finite(lo),
        "max": _finite(hi),
        "absmax": _finite(max(abs(lo), abs(hi))) if lo is not None and hi is not None else None,
        "nan": tally.nan,
        "inf": tally.inf,
        "first_nonfinite_row": tally.first_bad,
        "first": _finite_list(first),
        "_pad_nonzero": bool((norms[valid:] != 0).any()),
    }


class _Tally:
    """One slot's running statistics over its chunks: moments, range, NaN/Inf counts."""

    def __init__(self) -> None:
        self.acc = _Moments()
        self.lo, self.hi = math.inf, -math.inf
        self.nan = self.inf = 0
        self.first_bad: int | None = None

    def finite_chunk(self, chunk, stat_rows: int, norms) -> bool:
        """The fast path; False (nothing counted) when the chunk holds NaN/Inf."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        c_lo, c_hi = (float(v) for v in torch.aminmax(chunk))
        if not (math.isfinite(c_lo) and math.isfinite(c_hi)):
            return False
        n = _row_norms(chunk)
        norms.copy_(n)
        if stat_rows:
            part = chunk[:stat_rows]
            if stat_rows < chunk.shape[0]:
                c_lo, c_hi = (float(v) for v in torch.aminmax(part))
            self.acc.add(part, n[:stat_rows], part.numel())
            self.lo, self.hi = min(self.lo, c_lo), max(self.hi, c_hi)
        return True

    def nonfinite_chunk(self, chunk, r0: int, stat_rows: int, norms) -> None:
        """The slow path, only for chunks holding NaN/Inf (or float32 values whose squares overflow)."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        nan_rows, inf_rows = torch.isnan(chunk), torch.isinf(chunk)
        self.nan += int(nan_rows.sum())
        self.inf += int(inf_rows.sum())
        bad = nan_rows | inf_rows
        bad_row = bad.any(dim=-1)
        if self.first_bad is None and bool(bad_row.any()):
            self.first_bad = r0 + int(bad_row.nonzero()[0, 0])
        norms.copy_(torch.linalg.vector_norm(chunk, dim=-1))
        if stat_rows:
            part = chunk[:stat_rows].masked_fill(bad[:stat_rows], 0.0)
            finite = int((~bad[:stat_rows]).sum())
            if finite:
                self.acc.add(part, _row_norms(part), finite)
                vals = chunk[:stat_rows][~bad[:stat_rows]]
                self.lo, self.hi = min(self.lo, float(vals.min())), max(self.hi, float(vals.max()))


def _row_norms(chunk):
    """Per-row L2 norms in float64; rows whose squares overflow are scaled by their absmax."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    n = torch.linalg.vector_norm(chunk, dim=-1).double()
    if not bool(torch.isinf(n).any()):
        return n
    scale = chunk.abs().amax(dim=-1, keepdim=True).double()
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    return torch.linalg.vector_norm(chunk.double() / scale, dim=-1) * scale.squeeze(-1)


class _Moments:
    """Count, mean and variance of many values in parts, without overflow for huge values.

    The mean is kept as a running mean of part means; the sum of squares as `ssq * scale**2`
    with `scale` the largest row norm seen (as BLAS nrm2 does), so 1e300 stays finite.
    """

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self.scale = 0.0
        self.ssq = 0.0

    def add(self, part, row_norms, count: int) -> None:
        total = float(part.sum())
        if not math.isfinite(total):
            top = float(part.abs().max())
            total = float((part.double() / top).sum()) * top if top > 0 else 0.0
            part_mean = float((part.double() / top).sum() / count) * top if top > 0 else 0.0
        else:
            part_mean = total / count
        new = self.count + count
        self.mean += (part_mean - self.mean) * (count / new)
        self.count = new
        top = float(row_norms.max()) if row_norms.numel() else 0.0
        if top > self.scale:
            self.ssq *= (self.scale / top) ** 2
            self.scale = top
        if self.scale > 0:
            self.ssq += float((row_norms / self.scale).square().sum())

    def mean_std(self) -> tuple[float | None, float | None]:
        if not self.count:
            return None, None
        if self.scale == 0:
            return self.mean, 0.0
        mu = self.mean / self.scale
        var = max(self.ssq / self.count - mu * mu, 0.0)
        return self.mean, math.sqrt(var) * self.scale


def _rstrip_zeros(values: list) -> list:
    end = len(values)
    while end and values[end - 1] == 0:
        end -= 1
    return values[:end]


def _finite_list(t) -> list:
    """t.tolist() with NaN/Inf replaced by None (the common all-finite case stays fast)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if bool(torch.isfinite(t).all()):
        return t.tolist()
    if t.dim() == 1:
        return [_finite(v) for v in t.tolist()]
    return [_finite_list(row) for row in t]


def _finite(v: float | None) -> float | None:
    if v is None or not math.isfinite(v):
        return None
    return v
