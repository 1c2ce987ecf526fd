"""The numbers of one sample file in a scan record (engines/scan/records.py): read through torch's mmap,
a quick scan takes `rows` evenly spaced valid rows per slot, a full one every row.

Shipped to the box with the scan: torch and the standard library only.
"""

from __future__ import annotations

from eagle3_tui.engines.model import vocab
from eagle3_tui.engines.read.load import maps_file
from eagle3_tui.engines.results import ScanRecord
from eagle3_tui.engines.scan.pairprint import positions, record_print
from eagle3_tui.engines.scan.rows import (
    all_finite,
    fingerprint,
    finite_summary,
    no_readahead,
    part_stats,
    parts_apart,
    pick_rows,
    pread_rows,
    rows_pass,
    signature,
)

#: from this size on a quick scan reads its rows with pread (see pread_rows); below it, parsing
#: the zip costs more than the few pages a small file has
PREAD_MIN_BYTES = 16 << 20


def measure(path: str, size: int, head: bytes, *, full: bool, rows: int,
             drafter: tuple[str, str | None] | None = None, vocab_mapping: str | None = None) -> ScanRecord:
    """The measured fields of a sample's scan record (records.py adds its place in the tree)."""
    import torch

    from eagle3_tui.engines.read.load import load_sample

    sample = load_sample(path)
    n_slots = len(sample.slots)
    has_final = sample.final is not None
    parts = [s.tensor for s in sample.slots] + ([sample.final.tensor] if has_final else [])
    mapped = maps_file(head, size)  # else read whole: small, gzip or legacy torch files
    if mapped and not full:
        # ids and mask too, before valid_len reads them: through a plain mapping, reading those
        # 64 KiB pulled 16 MiB of readahead out of a 224 MiB sample
        for x in [*parts, *(v for v in (sample.ids, sample.loss_mask) if v is not None)]:
            no_readahead(x)
    t, valid = sample.tokens, sample.valid_len
    pick = pick_rows(t, valid, rows, sum(x.shape[1] for x in parts))  # None: every row
    quick = not full and pick is not None

    stats, sig, rows_f32 = _statistics(path, size, parts, pick, t, valid, mapped, quick, n_slots, has_final)

    mask = sample.loss_mask
    ids = sample.ids
    pad = t - valid
    if not quick or not mapped:
        bytes_read = size
        rows_read = t
    else:
        rows_read = len(pick)
        vec = sum(v.numel() * v.element_size() for v in (ids, mask) if v is not None)
        # the pairing rows (pairprint.positions) that the statistics did not pick are read too
        extra = len(set(positions(valid)) - set(pick.tolist()))
        rows_read += extra
        bytes_read = min(size, rows_read * sum(x.shape[1] * x.element_size() for x in parts) + vec + 4096)

    pad_flags = [s.pop("_pad_nonzero") for s in stats]
    # scan --drafter (engines/scan/agreement.py): the drafter's top-1 on this file, next to the data
    accepted = {}
    if drafter is not None:
        from eagle3_tui.engines.scan.agreement import record_acceptance

        accepted["accept"] = record_acceptance(sample, drafter[0], model=drafter[1], full=full, rows=rows)
    return {
        **accepted,
        "mode": "full" if full else "quick",
        "schema": sample.schema,
        "tokens": t,
        "valid_tokens": valid,
        "padding": pad,
        "padding_nonzero": any(pad_flags),
        "masked_zero_tail": _masked_zero_tail(ids, mask, t, pad),
        "loss_ones": int(torch.count_nonzero(mask[:valid])) if mask is not None else None,
        "k": n_slots,
        "hidden": sample.hidden,
        "dtype": sample.dtype,
        "final_norm": sample.final_norm,
        "slots": stats[:n_slots],
        "final": stats[n_slots] if has_final else None,
        "signature": sig,
        "fingerprint": fingerprint(ids, parts, valid, rows_f32),
        # what `eagle3-tui pair` matches a capture on (engines/scan/pairprint.py): the first ids, a
        # few rows projected small; read here so that pairing never opens the sample again
        "pair": record_print(ids, parts, valid),
        "rows_read": rows_read,
        "bytes_read": bytes_read,
        "mapped": mapped,
        # loss tokens in/out of the draft vocabulary (engines/model/vocab.py), when a mapping is in use
        **vocab.scan_counts(vocab_mapping, ids, mask, valid),
    }


def _statistics(path, size, parts, pick, t, valid, mapped, quick, n_slots, has_final):
    """(per-part stats, signature, every row as float32 or None) of a sample's parts."""
    import torch

    # every part in one batched pass when they share a width (the usual case: the per-op cost
    # of torch, not the arithmetic, is what a small file costs); else part by part
    rows_of = pread_rows(path, parts, pick) if mapped and quick and parts and size >= PREAD_MIN_BYTES else None
    rows_f32 = None  # every row as float32, when one pass held them all (the fingerprint's rows)
    if rows_of is not None and all(x.shape[1] == parts[0].shape[1] for x in parts):
        norms, cos, nan, inf, first, _ = rows_pass(rows_of, None, len(pick))
        first = [None if f is None else int(pick[f]) for f in first]
    elif parts and all(x.shape[1] == parts[0].shape[1] for x in parts):
        norms, cos, nan, inf, first, chunk = rows_pass(parts, pick if quick else None, t)
        rows_f32 = chunk if not quick else None
    else:
        norms, cos, nan, inf, first = parts_apart(parts, pick if quick else None, t, n_slots, has_final)
    # picked rows are sorted, valid ones first: the valid rows read are a prefix of norms
    picked_valid = int((pick < valid).sum()) if pick is not None else 0
    n_valid = picked_valid if quick else valid
    # signatures always come from the rows a quick scan reads, so quick and full records agree
    sig_rows = slice(0, n_valid) if quick or pick is None else pick[:picked_valid]
    same_width = len({x.shape[1] for x in parts[:n_slots]}) <= 1
    # the usual case (every norm and cosine finite): on a small file the per-op cost of torch,
    # not the arithmetic, is what the statistics cost, so they come from one reduction
    summary = None
    if len(norms) and n_valid and isinstance(sig_rows, slice):
        summary = finite_summary(norms, cos, n_valid, valid, quick, nan, inf, first, n_slots, has_final, same_width)
    if summary is not None:
        stats, sig = summary
    else:
        finite = bool(len(norms)) and all_finite(norms, cos)
        positions = pick if quick else torch.arange(t)
        stats = part_stats(norms, positions, valid, nan, inf, first, quick, n_valid if finite else None)
        sig = signature(norms, cos, sig_rows, n_slots, has_final, same_width, finite)
    return stats, sig, rows_f32


def _masked_zero_tail(ids, mask, t: int, pad: int) -> int:
    """Loss-masked rows in a trailing run of id 0 of at least two rows (padding with loss)."""
    import torch

    if ids is None or mask is None or pad:
        return 0
    nz = torch.nonzero(ids).flatten()
    tail_start = int(nz[-1]) + 1 if nz.numel() else 0
    return int(mask[tail_start:].ne(0).sum()) if t - tail_start >= 2 else 0
