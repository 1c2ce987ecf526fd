"""The numbers of one sample file in a scan record (engines/scan/file_record.py): read through torch's mmap,
a quick scan takes `rows` evenly spaced valid rows per slot, a full one every row.

Shipped to the box with the scan: torch and the standard library only.
"""

from __future__ import annotations

import bisect
import copy
import functools
import importlib.util
from typing import Any

from eagle3_tui.engines.model import vocab
from eagle3_tui.engines.read.load import ZIP_MAGIC, load_sample, maps_file
from eagle3_tui.engines.read.sample import Sample, SampleError
from eagle3_tui.engines.read.schema import normalize
from eagle3_tui.engines.results.scan import ScanRecord
from eagle3_tui.engines.scan.agreement import record_acceptance
from eagle3_tui.engines.scan.budget import PAGE, Reader, fit_rows, structure
from eagle3_tui.engines.scan.fingerprint import fingerprint
from eagle3_tui.engines.scan.options import DEFAULT_BUDGET
from eagle3_tui.engines.scan.pairprint import positions, record_print
from eagle3_tui.engines.scan.row_reads import no_readahead, pick_rows, pread_rows
from eagle3_tui.engines.scan.rows import part_stats, prefix_summary, signature
from eagle3_tui.engines.scan.rows_pass import all_finite, parts_apart, rows_pass

#: from this size on a quick scan reads its rows with pread (see pread_rows); below it, parsing
#: the zip costs more than the few pages a small file has
PREAD_MIN_BYTES = 16 << 20


def measure(path: str, size: int, head: bytes, *, full: bool, rows: int, budget: int = DEFAULT_BUDGET,
            drafter: tuple[str, str | None] | None = None, vocab_mapping: str | None = None,
            counted: bool = True, pair: bool = False, fd: int | None = None) -> ScanRecord:
    """The measured fields of a sample's scan record (file_record.py adds its place in the tree).
    A quick scan of a sample larger than `budget` reads its structure and rows with a counting
    reader (engines/scan/budget.py); a full scan, or a file that cannot be read so (or counted
    False), maps it. pair: the record carries the pairing print (engines/scan/pairprint.py).
    fd: the file open already, readahead off (file_record._head): the counting reader reads with it
    (the caller closes it)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if _numpy_missing():
        raise SampleError(NO_NUMPY)
    by_reader = counted and not full and size > budget and drafter is None
    mapped, reader, sample = _open(path, size, head, fd, counted=by_reader, full=full)
    n_slots = len(sample.slots)
    has_final = sample.final is not None
    parts = _parts(sample)
    ids, mask = sample.ids, sample.loss_mask
    ids_np, mask_np = _numpy(ids), _numpy(mask)
    t = sample.tokens
    valid = _valid_len(sample, ids_np, mask_np)
    vec = sum(v.numel() * v.element_size() for v in (ids, mask) if v is not None)
    per_part = _fit(rows, budget, size, parts, vec, t > valid)  # the same for both depths; None: every row
    # a sample larger than the budget gets picked rows, however few elements its rows hold (the
    # shortcut of pick_rows for those, every row, is for its CPU, not its bytes)
    picked = None if per_part is None else _pick(t, valid, per_part)
    if reader is not None and picked is None:  # every row after all: read through the mapping
        reader.close()
        return measure(path, size, head, full=full, rows=rows, budget=budget, vocab_mapping=vocab_mapping, counted=False,
                       pair=pair)
    quick = not full and picked is not None
    # the rows as an index tensor: for the mapped reads, a full scan's signature and the pairing
    # print (the counting reader reads rows by number: a tensor made a file for nothing, ~20 us)
    pick = None if picked is None or (reader is not None and not pair) else torch.tensor(picked, dtype=torch.long)
    rows_of = _read_rows(reader, parts, picked)
    stats, sig = _statistics(path, size, parts, pick, t, valid, mapped, quick, n_slots, has_final, rows_of, picked)

    pad = t - valid
    rows_read, bytes_read = _cost(reader, picked, quick, mapped, size, t, parts, vec, valid)

    pad_flags = [s.pop("_pad_nonzero") for s in stats]
    # scan --drafter (engines/scan/agreement.py): the drafter's top-1 on this file, next to the data
    read = (rows_of, picked) if rows_of is not None else None
    accepted: dict[str, Any] = {}
    if drafter is not None:
        accepted["accept"] = record_acceptance(sample, drafter[0], model=drafter[1], full=full, rows=rows)
    return {
        **accepted,  # type: ignore[typeddict-item]
        "mode": "full" if full else "quick",
        "schema": sample.schema,
        "tokens": t,
        "valid_tokens": valid,
        "padding": pad,
        "padding_nonzero": any(pad_flags),
        "masked_zero_tail": _masked_zero_tail(ids, mask, t, pad, ids_np),
        "loss_ones": _loss_ones(mask, mask_np, valid),
        "k": n_slots,
        "hidden": sample.hidden,
        "dtype": sample.dtype,
        "final_norm": sample.final_norm,
        "slots": stats[:n_slots],
        "final": stats[n_slots] if has_final else None,
        "signature": sig,
        "fingerprint": fingerprint(ids, parts, valid, read=read),
        # what `eagle3-tui pair` matches a capture on (engines/scan/pairprint.py), when asked;
        # under a byte budget, of the rows it read (the same rows whether asked or not)
        **({"pair": record_print(ids, parts, valid, read=read and (list(read[0]), pick))} if pair else {}),
        "rows_read": rows_read,
        "bytes_read": bytes_read,
        "mapped": mapped,
        # loss tokens in/out of the draft vocabulary (engines/model/vocab.py), when a mapping is in use
        **vocab.scan_counts(vocab_mapping, ids, mask, valid),
    }


#: the record of every file where torch has no numpy (an optional dependency of torch's, which
#: pip does not install with it: a box's Python may lack it)
NO_NUMPY = ("numpy is not installed next to torch, and a scan reads its rows through torch's numpy arrays: "
            "pip install numpy into the Python that runs the scan")


@functools.lru_cache(maxsize=1)
def _numpy_missing() -> bool:
    try:
        return importlib.util.find_spec("numpy") is None
    except (ImportError, ValueError):  # a broken or blocked install is no install
        return True


def _open(path: str, size: int, head: bytes, fd: int | None, *, counted: bool, full: bool):
    """(mapped: torch maps the file, the counting reader or None, the Sample). counted: a quick scan
    under a byte budget, whose structure and rows a counting reader reads when the file is torch's
    zip (_structure_only); else the Sample is loaded, and a quick scan's mapped tensors are read
    with readahead off."""
    mapped = maps_file(head, size)  # else read whole: small, gzip or legacy torch files
    reader = sample = None
    if counted and (mapped or head.startswith(ZIP_MAGIC)):
        reader, sample = _structure_only(path, head, fd)
    if sample is None:
        sample = load_sample(path)
    if mapped and not full and reader is None:
        # ids and mask too, before valid_len reads them: through a plain mapping, reading those
        # 64 KiB pulled 16 MiB of readahead out of a 224 MiB sample
        parts = _parts(sample)
        for x in [*parts, *(v for v in (sample.ids, sample.loss_mask) if v is not None)]:
            no_readahead(x)
    return mapped, reader, sample


def _parts(sample: Sample) -> list:
    """The sample's hidden-state tensors: its slots, then its final state when it has one."""
    return [s.tensor for s in sample.slots] + ([sample.final.tensor] if sample.final is not None else [])


def _read_rows(reader, parts: list, picked: list[int] | None):
    """The picked rows of each part as the counting reader reads them (one [P, R, H] tensor, else
    one [R, w] per part), the reader closed after; None without a reader (the rows are mapped)."""
    if reader is None:
        return None
    try:
        rows_of = reader.block(parts, picked)
        return rows_of if rows_of is not None else reader.rows(parts, picked)
    finally:
        reader.close()


def _cost(reader, picked: list[int] | None, quick: bool, mapped: bool, size: int, t: int, parts: list, vec: int,
          valid: int) -> tuple[int, int]:
    """(rows read per part, bytes read) of a sample: counted by the reader when it read them."""
    if reader is not None:
        return len(picked or ()), reader.bytes
    if not quick or not mapped or picked is None:
        return t, size
    # a quick read through the mapping (a file the reader could not take): the rows' share, with
    # the pairing rows (pairprint.positions) the statistics did not pick
    n = len(picked) + len(set(positions(valid)) - set(picked))
    return n, min(size, n * sum(x.shape[1] * x.element_size() for x in parts) + vec + PAGE)


def _statistics(path, size, parts, pick, t, valid, mapped, quick, n_slots, has_final, rows_of=None, picked=None):
    """(per-part stats, signature) of a sample's parts. rows_of: the picked rows of each part,
    read already (budget.Reader.block: one [P, R, H] tensor, or .rows: one [R, w] per part);
    picked: pick as a list."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    # every part in one batched pass when they share a width (the usual case: the per-op cost
    # of torch, not the arithmetic, is what a small file costs); else part by part
    widths = [x.shape[1] for x in parts]
    same = len(set(widths)) <= 1
    if rows_of is None and mapped and quick and parts and same and size >= PREAD_MIN_BYTES:
        rows_of = pread_rows(path, parts, pick)
    if rows_of is not None:
        pass_ = rows_pass(rows_of, None, len(picked)) if same else parts_apart(rows_of, None, len(picked), n_slots, has_final)
        norms, cos, nan, inf, first, _ = pass_
        first = [None if f is None else picked[f] for f in first]
    elif parts and same:
        norms, cos, nan, inf, first, _ = rows_pass(parts, pick if quick else None, t)
    else:
        norms, cos, nan, inf, first, _ = parts_apart(parts, pick if quick else None, t, n_slots, has_final)
    # picked rows are sorted, valid ones first: the valid rows read are a prefix of norms
    picked_valid = bisect.bisect_left(picked, valid) if picked is not None else 0
    n_valid = picked_valid if quick else valid
    # signatures always come from the rows a quick scan reads, so quick and full records agree
    sig_rows = slice(0, n_valid) if quick or pick is None else pick[:picked_valid]
    same_width = len(set(widths[:n_slots])) <= 1
    # the valid rows read are a prefix of the norms (every quick scan, a full one of every row): on a
    # small file the per-op cost of torch, not the arithmetic, is what the statistics cost, so they
    # are summed in Python; the torch path is a full scan's of picked rows
    if norms.shape[0] and n_valid and isinstance(sig_rows, slice):
        return prefix_summary(norms, cos, n_valid, valid, quick, nan, inf, first, n_slots, has_final, same_width)
    norms, cos = torch.as_tensor(norms), None if cos is None else torch.as_tensor(cos)  # (a block's: numpy)
    finite = bool(norms.shape[0]) and all_finite(norms, cos)
    positions = (pick if pick is not None else torch.tensor(picked)) if quick else torch.arange(t)
    stats = part_stats(norms, positions, valid, nan, inf, first, quick, n_valid if finite else None)
    sig = signature(norms, cos, sig_rows, n_slots, has_final, same_width, finite)
    return stats, sig


#: the structure the last file's static read returned (engines/read/torch_zip.py hands the same
#: object to every file of a shard laid out alike), the Sample made of it (its ids and loss mask
#: still structure-only), and what fit_rows answered for it: the same for the next such file
_LAYOUT: list = [None, None, {}]
#: (tokens, valid tokens, rows) -> pick_rows' answer (read only)
_PICKS: dict[tuple[int, int, int], list[int] | None] = {}


def _fit(rows: int, budget: int, size: int, parts: list, vec: int, padded: bool) -> int | None:
    sample = _LAYOUT[1]
    if sample is None or not sample.slots or parts[0] is not sample.slots[0].tensor:
        return fit_rows(rows, budget, size, parts, vec, padded)
    key = (rows, budget, size, vec, padded)
    if key not in _LAYOUT[2]:
        _LAYOUT[2][key] = fit_rows(rows, budget, size, parts, vec, padded)
    return _LAYOUT[2][key]


def _pick(t: int, valid: int, per_part: int) -> list[int] | None:
    """pick_rows' rows (None for every row)."""
    key = (t, valid, per_part)
    if key not in _PICKS:
        if len(_PICKS) >= 256:
            _PICKS.clear()
        _PICKS[key] = pick_rows(t, valid, per_part)
    return _PICKS[key]


def _shallow(sample: Sample) -> Sample:
    """copy.copy(sample) (the same shallow copy of a dataclass's fields) without copy's protocol
    machinery, a few microseconds a file."""
    out = object.__new__(Sample)
    out.__dict__.update(sample.__dict__)
    return out


def _structure_only(path: str, head: bytes, fd: int | None = None):
    """(counting reader, Sample whose parts are structure-only tensors and whose ids and loss mask
    are read), or (None, None) when the file is not read so (the caller maps it). fd: the file
    open already (readahead off), the reader's to use and not to close."""
    reader = None
    try:
        reader = Reader(path, fd=fd, first=head if fd is not None else b"")
        found = structure(reader, head)
        if found is None:
            reader.close()
            return None, None
        if found[0] is _LAYOUT[0] and not found[1]:
            sample = _shallow(_LAYOUT[1])  # laid out as the file before: its Sample, this path
            sample.path = path
        else:
            sample = normalize(found[0], path=path, metadata=found[1])
            parts = _parts(sample)
            if not parts or any(x.device.type != "meta" or x.dim() != 2 or x.stride(-1) != 1 or x.shape[0] != parts[0].shape[0]
                                or getattr(x.untyped_storage(), "_checkpoint_offset", None) is None for x in parts):
                reader.close()
                return None, None  # a layout made of computed tensors (dequantised...): read as before
            _LAYOUT[:] = [found[0], copy.copy(sample), {}] if not found[1] else [None, None, {}]
        vectors = [v for v in (sample.ids, sample.loss_mask) if v is not None]
        read = reader.wholes(vectors) if vectors else []
        if sample.ids is not None:
            sample.ids = read.pop(0)
        if sample.loss_mask is not None:
            sample.loss_mask = read.pop(0)
        return reader, sample
    except Exception:  # noqa: BLE001 - whatever this reading trips on, the mapped read says it properly
        if reader is not None:
            reader.close()
        return None, None


def _valid_len(sample, ids_np, mask_np) -> int:
    """sample.valid_len (rows less the trailing run where both the id and the loss mask are 0),
    its trailing run found in numpy: the Python loop over 2,048 ids turned into lists cost ~50 us
    a padded file."""
    # its usual case (a last id or mask not 0) from numpy views: indexing a tensor for one element
    # costs microseconds of dispatch, thrice a file
    if ids_np is not None and mask_np is not None and len(ids_np) and (int(ids_np[-1]) or int(mask_np[-1])):
        return sample.tokens
    if ids_np is None or mask_np is None or ids_np.ndim != 1 or mask_np.shape != ids_np.shape or not len(ids_np):
        return sample.valid_len
    kept = ((ids_np != 0) | (mask_np != 0)).nonzero()[0]  # NaN is not 0, as in the loop
    return sample.tokens - (len(ids_np) - (int(kept[-1]) + 1 if len(kept) else 0))


def _numpy(x):
    """A numpy view of tensor x (no copy), None when numpy has no such dtype (bf16) or x is not
    a plain CPU tensor. (Arrays torch makes, used through their own methods: numpy is never
    imported here, the agent ships torch and the standard library only.)"""
    if x is None:
        return None
    try:
        return x.numpy()
    except (RuntimeError, TypeError):
        return None


def _loss_ones(mask, mask_np, valid: int) -> int | None:
    """Rows with loss among the valid ones (counted on the numpy view when there is one)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if mask_np is not None:
        return int((mask_np[:valid] != 0).sum())
    return int(torch.count_nonzero(mask[:valid])) if mask is not None else None


def _masked_zero_tail(ids, mask, t: int, pad: int, ids_np=None) -> int:
    """Loss-masked rows in a trailing run of id 0 of at least two rows (padding with loss).
    ids_np: a numpy view of ids (its last id read there)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if ids is None or mask is None or pad or not ids.shape[0]:
        return 0
    if int(ids_np[-1] if ids_np is not None else ids[-1]):  # a last id not 0: no such run
        return 0
    nz = torch.nonzero(ids).flatten()
    tail_start = int(nz[-1]) + 1 if nz.numel() else 0
    return int(mask[tail_start:].ne(0).sum()) if t - tail_start >= 2 else 0
