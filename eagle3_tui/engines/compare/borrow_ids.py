"""An id-less capture borrows the token ids of its training sample (`accept --ids-from SAMPLE`,
the compare view's acceptance of B): the two are aligned as compare aligns them (by the hidden
states, engines/compare/align.py) and the capture keeps the rows that line up, each with the id
(and, when it has none, the loss mask) of the sample's row it holds.

torch and the standard library only: shipped to the remote box by the agent.
"""

from __future__ import annotations

from eagle3_tui.engines.compare.run import compare
from eagle3_tui.engines.read.load import load_sample
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
    al = compare(other, sample)["alignment"]
    n = int(al.get("length") or 0)
    if al.get("method") != "hidden" or n <= 0:
        raise SampleError(f"the sample has no token ids, and those of {ids_from} cannot stand in: their hidden "
                          "states do not line up at any offset")
    a0, b0 = int(al["a_start"]), int(al["b_start"])

    def cut(slot: Slot | None) -> Slot | None:
        if slot is None:
            return None
        return Slot(slot.tensor[b0 : b0 + n], slot.label, slot.boundary, slot.boundary_note)

    mask = sample.loss_mask[b0 : b0 + n] if sample.loss_mask is not None else (
        other.loss_mask[a0 : a0 + n] if other.loss_mask is not None else None)
    note = (f"token ids{' and loss mask' if sample.loss_mask is None and mask is not None else ''} "
                 f"borrowed from {ids_from} (its rows {a0}-{a0 + n - 1}, aligned by the hidden states"
                 + (f", row {b0} here on its row {a0}" if a0 != b0 else "") + ")")
    return Sample(path=sample.path, schema=sample.schema, slots=[cut(s) for s in sample.slots], final=cut(sample.final),
                  final_norm=sample.final_norm, ids=other.ids[a0 : a0 + n], loss_mask=mask,
                  source_keys={**sample.source_keys, "input_ids": f"borrowed from {ids_from}"},
                  assumptions=[*sample.assumptions, note])
