"""The dataset view's strips while records stream in: re-binned one slot per flush (each costs a
merge of 100,000 values: all at once would hold the keys up), and shown when all are; a round
at most every BINS_SECONDS, and at most 1/20 of the time."""

from __future__ import annotations

import time

from eagle3_tui.ui.dataset.bins import SlotBins, dataset_bins, part_bins
from eagle3_tui.ui.dataset.model import DatasetRows

#: the strips are re-binned at most this often while records stream in
BINS_SECONDS = 1.0


class StripBinning:
    def __init__(self) -> None:
        #: the parts (slots, None: final) left to bin in this round, and the bins done so far
        self.round: list[int | None] = []
        self.new: list[SlotBins | None] = []
        self.at = self.cost = 0.0

    def reset(self) -> None:
        self.round, self.at = [], 0.0

    def step(self, rows: DatasetRows) -> list[SlotBins] | None:
        """One slot binned; every slot's bins when this completes a round (else None)."""
        now = time.monotonic()
        if not self.round:
            if now < self.at or not len(rows):
                return None
            self.round, self.new, self.cost = rows.parts(), [], 0.0
        part = self.round.pop(0)
        self.new.append(part_bins(rows, part))
        self.cost += time.monotonic() - now
        if self.round:
            return None
        self.at = now + max(BINS_SECONDS, 20 * self.cost)
        return [b for b in self.new if b is not None]

    def all(self, rows: DatasetRows) -> list[SlotBins]:
        """Every slot at once (the scan ended): a round under way is dropped."""
        self.round = []
        return dataset_bins(rows)
