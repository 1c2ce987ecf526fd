"""Per-slot summaries of a Sample: per-token L2 norms, element stats, NaN/Inf, first-k values.

Runs on the remote box too (shipped by the agent): torch and the standard library only.
Big slots are processed in row chunks so that no float32 copy of a whole slot is made.
Norms and element stats are taken over the valid rows (padding excluded); NaN/Inf are
counted over every row. Non-finite results are returned as None (JSON null).
"""

from __future__ import annotations

import math
import threading
from typing import Any

from eagle3_tui.samples.sample import NotASample, Sample, SampleError, Slot

#: elements per chunk: bounds the temporary memory, big enough to amortise per-call overhead
CHUNK_ELEMENTS = 1 << 22


class Cancelled(Exception):
    """The caller asked the summary to stop (a newer request replaced it)."""


def summarize_file(
    path: str,
    *,
    k: int = 5,
    slots: int | None = None,
    hidden: int | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    """Summary JSON object for one file; file problems become {"path", "error"}."""
    from eagle3_tui.samples.load import load_sample

    try:
        sample = load_sample(path, slots=slots, hidden=hidden)
        return summarize(sample, k=k, cancel=cancel)
    except NotASample as err:
        return {"path": path, "error": str(err), "not_sample": True, "contents": err.contents}
    except SampleError as err:
        return {"path": path, "error": str(err)}
    except MemoryError:
        return {"path": path, "error": "out of memory while loading the file"}


def summarize(sample: Sample, *, k: int = 5, cancel: threading.Event | None = None) -> dict[str, Any]:
    t = sample.tokens
    valid = sample.valid_len
    slots = [
        _slot_summary(s, i, k=k, valid=valid, cancel=cancel) for i, s in enumerate(sample.slots)
    ]
    final = (
        _slot_summary(sample.final, None, k=k, valid=valid, cancel=cancel)
        if sample.final is not None
        else None
    )
    ids = sample.ids.tolist() if sample.ids is not None else None
    mask = sample.loss_mask.tolist() if sample.loss_mask is not None else None

    warnings: list[str] = []
    pad = t - valid
    pad_nonzero = False
    if pad:
        pad_nonzero = any(
            any(n is None or n > 0 for n in part["norms"][valid:])
            for part in [*slots, *([final] if final else [])]
        )
        if pad_nonzero:
            warnings.append(
                f"{pad} padding rows (ids 0, loss mask 0) carry non-zero hidden states: "
                "exclude them when comparing"
            )
    if ids is not None and mask is not None and not pad:
        zero_tail = len(ids) - len(_rstrip_zeros(ids))
        if zero_tail >= 2 and any(mask[len(ids) - zero_tail :]):
            warnings.append(
                f"the last {zero_tail} rows have id 0 but loss mask 1: padding taken for real tokens?"
            )
    if mask is not None and not any(mask[:valid]):
        warnings.append("loss mask is 0 on every token: this sample trains nothing")
    for part in [*slots, *([final] if final else [])]:
        if part["nan"] or part["inf"]:
            warnings.append(
                f"{part['label']}: {part['nan']} NaN and {part['inf']} Inf values, "
                f"first in row {part['first_nonfinite_row']}"
            )

    return {
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
        "final_norm": sample.final_norm,
        "ids": ids,
        "mask": mask,
        "loss_mask": {"ones": int(sum(1 for m in mask if m)), "total": len(mask)} if mask is not None else None,
        "padding": {"trailing": pad, "nonzero_hidden": pad_nonzero},
        "source_keys": dict(sample.source_keys),
        "assumptions": list(sample.assumptions),
        "warnings": warnings,
    }


def _slot_summary(
    slot: Slot, index: int | None, *, k: int, valid: int, cancel: threading.Event | None
) -> dict[str, Any]:
    import torch

    x = slot.tensor
    rows, width = x.shape
    step = max(1, CHUNK_ELEMENTS // max(width, 1))
    norms = torch.empty(rows, dtype=torch.float32)
    total = 0.0
    total_sq = 0.0
    count = 0
    lo = math.inf
    hi = -math.inf
    nan = inf = 0
    first_bad: int | None = None

    # Each chunk is copied into one float32 buffer, then reduced there: bf16 reductions on the CPU
    # are several times slower than a conversion plus float32 reductions. The buffer bounds the
    # extra memory at CHUNK_ELEMENTS floats, instead of a float32 copy of the whole slot.
    # Variance comes from float32 sums of squares (the row norms): relative error ~1e-6 of E[x^2],
    # plenty for hidden states whose mean is small next to their spread.
    buf = torch.empty((min(step, rows), width), dtype=torch.float32)
    for r0 in range(0, rows, step):
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        r1 = min(rows, r0 + step)
        chunk = buf[: r1 - r0]
        chunk.copy_(x[r0:r1])
        n = torch.linalg.vector_norm(chunk, dim=-1)
        norms[r0:r1] = n
        c_sum = float(chunk.sum(dtype=torch.float64 if x.dtype == torch.float64 else torch.float32))
        c_lo, c_hi = (float(v) for v in torch.aminmax(chunk))
        if math.isfinite(c_sum) and math.isfinite(c_lo) and math.isfinite(c_hi):
            stat_rows = max(0, min(r1, valid) - r0)
            if stat_rows == r1 - r0:
                total += c_sum
                total_sq += float(n.double().square().sum())
                lo, hi = min(lo, c_lo), max(hi, c_hi)
                count += chunk.numel()
            elif stat_rows:
                part = chunk[:stat_rows]
                total += float(part.sum())
                total_sq += float(n[:stat_rows].double().square().sum())
                p_lo, p_hi = torch.aminmax(part)
                lo, hi = min(lo, float(p_lo)), max(hi, float(p_hi))
                count += part.numel()
            continue
        # slow path, only for chunks holding NaN/Inf
        nan_rows = torch.isnan(chunk)
        inf_rows = torch.isinf(chunk)
        nan += int(nan_rows.sum())
        inf += int(inf_rows.sum())
        bad_row = (nan_rows | inf_rows).any(dim=-1)
        if first_bad is None and bool(bad_row.any()):
            first_bad = r0 + int(bad_row.nonzero()[0, 0])
        stat_rows = max(0, min(r1, valid) - r0)
        if stat_rows:
            part = chunk[:stat_rows]
            finite = torch.isfinite(part)
            vals = part[finite]
            if vals.numel():
                total += float(vals.sum(dtype=torch.float64))
                total_sq += float(vals.double().square().sum())
                lo, hi = min(lo, float(vals.min())), max(hi, float(vals.max()))
                count += vals.numel()

    valid_norms = norms[:valid]
    finite_norms = valid_norms[torch.isfinite(valid_norms)]
    if count:
        mean = total / count
        var = max(total_sq / count - mean * mean, 0.0)
        std = math.sqrt(var)
    else:
        mean = std = None
        lo = hi = None
    first = x[:, : max(0, min(k, width))].float()

    return {
        "index": index,
        "label": slot.label,
        "boundary": slot.boundary,
        "boundary_note": slot.boundary_note,
        "dtype": str(x.dtype).removeprefix("torch."),
        "norms": _finite_list(norms),
        "norm_mean": _finite(float(finite_norms.mean())) if finite_norms.numel() else None,
        "norm_min": _finite(float(finite_norms.min())) if finite_norms.numel() else None,
        "norm_max": _finite(float(finite_norms.max())) if finite_norms.numel() else None,
        "mean": _finite(mean),
        "std": _finite(std),
        "min": _finite(lo),
        "max": _finite(hi),
        "absmax": _finite(max(abs(lo), abs(hi))) if lo is not None else None,
        "nan": nan,
        "inf": inf,
        "first_nonfinite_row": first_bad,
        "first": _finite_list(first),
    }


def _rstrip_zeros(values: list) -> list:
    end = len(values)
    while end and values[end - 1] == 0:
        end -= 1
    return values[:end]


def _finite_list(t) -> list:
    """t.tolist() with NaN/Inf replaced by None (the common all-finite case stays fast)."""
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
