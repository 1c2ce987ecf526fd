"""What a scan record keeps so that a capture can be paired with its training sample without
reading the sample again (dataset/pair.py ranks; `eagle3-tui pair`):

    record["pair"] = {"n": valid tokens,
                      "ids": base64 of the first PAIR_IDS valid ids (int32 LE) or None,
                      "ids_hash": digest of every valid id, "heads": {"512": digest of ids[:512], ...},
                      "pos": [row positions], "w": [width of each part],
                      "rows": base64 of int8 [parts, len(pos), PROJ]}

Rows: the hidden states at `positions(n)` (the first 8 rows, then two per octave; under a byte
budget, the rows the quick scan read instead), each part's
row projected on PROJ fixed +-1 directions (made from a hash, so the box and this machine build
the same ones whatever torch they run) and scaled to unit length, as int8. Cosines between two
projected rows estimate the cosines of the rows. The first rows alone would not do: samples
that share a system prompt share their first rows exactly (attention is causal), so the rows
past it, at growing distances, tell the samples apart.

torch and the standard library only (shipped to the remote box by the agent).
"""

from __future__ import annotations

import base64
import hashlib
import struct
from functools import lru_cache
from typing import cast

from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.sample import SampleError, blank_ids
from eagle3_tui.engines.results.errors import error_result
from eagle3_tui.engines.results.scan import CapturePrint, RecordPrint

#: token ids a record keeps (the head a capture's prompt is matched on, exactly)
PAIR_IDS = 256
#: projected dimensions per row
PROJ = 32
#: rows are never taken past this position (a prompt sharing more is shared)
MAX_POS = 1 << 14


def positions(n: int) -> list[int]:
    """Row positions kept for a sample of n valid rows: 0..7, then 8, 12, 16, 24, 32, 48, ..."""
    out = list(range(min(n, 8)))
    p = 8
    while p < min(n, MAX_POS):
        out.append(p)
        half = p + p // 2
        if half < min(n, MAX_POS):
            out.append(half)
        p *= 2
    return out


def ids_digest(ids: list[int]) -> str:
    return hashlib.blake2b(struct.pack(f"<{len(ids)}q", *ids), digest_size=8).hexdigest()


def head_lengths(n: int) -> list[int]:
    """Lengths past PAIR_IDS whose prefix digest a record keeps: 512, 1024, ... below n."""
    out, p = [], PAIR_IDS * 2
    while p < n:
        out.append(p)
        p *= 2
    return out


def ids_part(ids: list[int] | None) -> RecordPrint:
    if ids is None:
        return {"ids": None, "ids_hash": None, "heads": {}}
    head = ids[:PAIR_IDS]
    packed = struct.pack(f"<{len(ids)}q", *ids)  # once: each digest hashes a prefix of it (ids_digest)

    def digest(n: int) -> str:
        return hashlib.blake2b(packed[:8 * n], digest_size=8).hexdigest()

    return {"ids": base64.b64encode(struct.pack(f"<{len(head)}i", *head)).decode(),
            "ids_hash": digest(len(ids)), "heads": {str(p): digest(p) for p in head_lengths(len(ids))}}


def decode_ids(text: str | None) -> list[int] | None:
    if text is None:
        return None
    raw = base64.b64decode(text)
    return list(struct.unpack(f"<{len(raw) // 4}i", raw))


@lru_cache(maxsize=8)
def projection(width: int):
    """[width, PROJ] of +-1, the same on every machine (from a hash, not torch's generator)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    raw = hashlib.shake_128(f"eagle3-pair {width} {PROJ}".encode()).digest(width * PROJ // 8 + 1)
    bits = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
    signs = ((bits[:, None] >> torch.arange(8, dtype=torch.uint8)) & 1).flatten()[: width * PROJ]
    return signs.float().mul(2).sub(1).view(width, PROJ)


def project(parts: list, pos: list[int]):
    """int8 [len(parts), len(pos), PROJ]: each part's rows at `pos`, projected, unit length.
    Parts of one width go through one product (torch's per-op cost is most of a small file's)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    at = torch.tensor(pos, dtype=torch.long)
    out = torch.zeros(len(parts), len(pos), PROJ, dtype=torch.int8)
    for width in sorted({int(x.shape[1]) for x in parts}):
        idx = [i for i, x in enumerate(parts) if x.shape[1] == width]
        rows = torch.cat([parts[i].index_select(0, at) for i in idx]).float()
        rows = torch.nan_to_num(rows, nan=0.0, posinf=0.0, neginf=0.0)
        y = rows @ projection(width)
        y = y / y.norm(dim=1, keepdim=True).clamp_min(1e-12)
        out[idx] = y.mul(127).round().to(torch.int8).view(len(idx), len(pos), PROJ)
    return out


def record_print(ids, parts: list, valid: int, read=None) -> RecordPrint:
    """The record's "pair" field (see the module docstring). read: (rows of each part, their
    positions) when a byte budget read only those rows: the print keeps the valid ones of them
    instead of positions(valid), so pairing costs no byte past the budget."""
    id_list = ids[:valid].tolist() if ids is not None else None  # an integer tensor: Python ints
    if read is not None:
        rows_of, pick = read
        picked = pick.tolist()
        keep = [i for i, r in enumerate(picked) if r < min(valid, MAX_POS)]
        pos = [picked[i] for i in keep]
        rows = project([x[keep] for x in rows_of], list(range(len(keep)))) if keep and rows_of else None
    else:
        pos = positions(valid)
        rows = project(parts, pos) if pos and parts else None
    return {"n": valid, **ids_part(id_list), "pos": pos, "w": [int(x.shape[1]) for x in parts],
            "rows": base64.b64encode(rows.numpy().tobytes()).decode() if rows is not None else None}


def capture_print(path: str, widths: list[int], slots: int | None = None,
                  hidden: int | None = None) -> CapturePrint:
    """What pairing needs of a capture: its valid ids (all of them) and, for each width in
    `widths` (the dataset's), its rows at positions(n) cut into parts of that width."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    try:
        s = load_sample(path, slots=slots, hidden=hidden)
    except (SampleError, MemoryError) as err:
        return cast(CapturePrint, error_result(path, err))
    n = s.valid_len
    parts = [sl.tensor for sl in s.slots] + ([s.final.tensor] if s.final is not None else [])
    ids = [int(v) for v in s.ids[:n].tolist()] if s.ids is not None else None
    blank = blank_ids(ids)  # all one value (padding): no ids, pairing goes by states
    if blank is not None:
        ids = None
    # every row (up to MAX_POS): a record keeps positions(n) or, under a byte budget, the rows
    # the scan read; the capture's rows at either are picked out when matching (dataset/pair.py)
    pos = list(range(min(n, MAX_POS)))
    by_width: dict[str, str] = {}
    for w in sorted(set(widths)):
        cut = [x for x in parts if x.shape[1] == w]
        if not cut:  # a bare capture split by guesswork: cut the whole width again at w
            whole = torch.cat(parts, dim=1) if parts else None
            if whole is None or whole.shape[1] % w:
                continue
            cut = list(whole.split(w, dim=1))
        if pos:
            by_width[str(w)] = base64.b64encode(project(cut, pos).numpy().tobytes()).decode()
    return {"path": path, "n": n, "ids": ids, "pos": pos, "rows": by_width, "tokens": s.tokens,
            **({"ids_blank": blank} if blank else {})}
