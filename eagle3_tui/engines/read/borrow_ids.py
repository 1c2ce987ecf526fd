"""An id-less capture borrows the token ids of its training sample (`accept --ids-from SAMPLE`,
the compare view's acceptance of B): the two are aligned as compare aligns a capture without ids
(engines/compare/align.py: the lag of B's rows against A's with the best hidden-state cosine,
row_lag.py, when it reaches UNRELATED_COS) and the capture keeps the rows that line up, each with
the id (and, when it has none, the loss mask) of the sample's row it holds.

torch and the standard library only: shipped to the remote box by the agent.
"""

from __future__ import annotations

from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.row_lag import MAX_LAG, UNRELATED_COS, best_lag, lag_scores
from eagle3_tui.engines.read.sample import Sample, SampleError, Slot
from eagle3_tui.engines.read.shapes import split_like


def borrow_ids(sample: Sample, ids_from: str) -> Sample:
    """`sample` as it is when it has ids; else its aligned rows with `ids_from`'s ids. Raises
    SampleError (one line) when `ids_from` has no ids or the two do not line up. What was done is
    said in the sample's assumptions (the acceptance result's notes)."""
    if sample.ids is not None:
        sample.assumptions = [*sample.assumptions, f"--ids-from {ids_from} not used: the sample has token ids of its own"]
        return sample
    try:
        other = load_sample(ids_from)
    except SampleError as err:
        raise SampleError(f"{ids_from} (to borrow token ids from): {err}") from None
    if other.ids is None:
        raise SampleError(f"the sample has no token ids, nor has {ids_from} (to borrow them from)")
    sample = split_like(sample, other)
    lined = _hidden_offset(other, sample)
    if lined is None:
        raise SampleError(f"the sample has no token ids, and those of {ids_from} cannot stand in: their hidden "
                          "states do not line up at any offset")
    a0, b0, n = lined

    def cut(slot: Slot) -> Slot:
        return Slot(slot.tensor[b0 : b0 + n], slot.label, slot.boundary, slot.boundary_note)

    mask = sample.loss_mask[b0 : b0 + n] if sample.loss_mask is not None else (
        other.loss_mask[a0 : a0 + n] if other.loss_mask is not None else None)
    note = (f"token ids{' and loss mask' if sample.loss_mask is None and mask is not None else ''} "
                 f"borrowed from {ids_from} (its rows {a0}-{a0 + n - 1}, aligned by the hidden states"
                 + (f", row {b0} here on its row {a0}" if a0 != b0 else "") + ")")
    return Sample(path=sample.path, schema=sample.schema, slots=[cut(s) for s in sample.slots],
                  final=cut(sample.final) if sample.final is not None else None,
                  final_norm=sample.final_norm, ids=other.ids[a0 : a0 + n], loss_mask=mask,
                  source_keys={**sample.source_keys, "input_ids": f"borrowed from {ids_from}"},
                  assumptions=[*sample.assumptions, note])


def _hidden_offset(a: Sample, b: Sample) -> tuple[int, int, int] | None:
    """(A's first row, B's first row, rows) where id-less B's rows line up with A's valid rows by
    the hidden states, B row t on A row t + lag for the best lag; None when no lag reaches
    UNRELATED_COS or no row lines up. As compare's alignment of the same pair (align.py)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if not (a.hidden == b.hidden and a.hidden > 0 and a.slots and b.slots):
        return None
    a_valid, b_valid = a.valid_len, b.valid_len
    with torch.no_grad():
        scores = lag_scores(a.slots, b.slots, a_valid, b_valid, 0, b_valid, range(-MAX_LAG, MAX_LAG + 1))
    lag = best_lag(scores)
    score = scores[lag] if lag is not None else None
    if lag is None or score is None or score < UNRELATED_COS:
        return None
    b0 = max(0, -lag)
    b1 = min(b_valid, a.tokens - lag)
    on_padding = max(0, min(b1 - b0, b1 + lag - a_valid))  # B rows that land on A's padding
    n = b1 - b0 - on_padding
    return (b0 + lag, b0, n) if n > 0 else None
