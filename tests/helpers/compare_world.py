"""Compare's test data: real hidden states of the demo transformer (float32 training samples,
bf16 engine captures) with faults injected, and reading a result's findings."""

from __future__ import annotations

import random

import torch

from eagle3_tui.demo.prompt import toy_prompt as _make_prompt
from eagle3_tui.demo.model import build_model
from eagle3_tui.engines.read.sample import Sample, Slot

AUX = (2, 5, 7)  # the model's default EAGLE-3 boundaries (L = 10)


class World:
    """One model and a few prompts, with their float32 (training) and bf16 (engine) states."""

    def __init__(self, seed: int = 0):
        self.model = build_model(seed=seed)
        rng = random.Random(100 + seed)
        self.prompts = [_make_prompt(rng, 1000) for _ in range(3)]
        self._runs: dict = {}

    def run(self, ids: list[int], dtype=torch.float32):
        key = (tuple(ids), dtype)
        if key not in self._runs:
            self._runs[key] = self.model.boundaries(torch.tensor(ids), dtype)
        return self._runs[key]

    def train(self, i: int = 0, pad: int = 0) -> Sample:
        """A SpecForge training sample (float32) of prompt i, right-padded by `pad` rows."""
        p = self.prompts[i]
        ids = p.ids + [0] * pad
        states, final = self.run(ids)
        return Sample(
            path=f"train_{i}", schema="SpecForge offline",
            slots=[Slot(states[b], f"aux{k}") for k, b in enumerate(AUX)],
            final=Slot(final, "final"), final_norm="post",
            ids=torch.tensor(ids), loss_mask=torch.tensor(p.loss_mask + [0] * pad),
        )

    def capture(self, i: int = 0, *, boundaries=AUX, ids=None, with_ids=True, final=None,
                dtype=torch.bfloat16, rows: slice | None = None, final_norm=None) -> Sample:
        """An engine capture of prompt i (or of `ids`): slots at `boundaries`, optional final."""
        seq = list(ids if ids is not None else self.prompts[i].ids)
        states, post = self.run(seq, dtype)
        sl = rows or slice(None)
        slots = [Slot(states[b][sl], f"aux{k}") for k, b in enumerate(boundaries)]
        fin = None
        if final == "post":
            fin = Slot(post[sl], "final")
        elif final == "pre":
            fin = Slot(states[-1][sl], "final")
        n = slots[0].tensor.shape[0]
        return Sample(path="capture", schema="test capture", slots=slots, final=fin, final_norm=final_norm,
                      ids=torch.tensor(seq)[sl][:n] if with_ids else None)


def codes(result, *, serious=True) -> set[str]:
    return {f["code"] for f in result["findings"] if not serious or f["severity"] != "info"}


def finding(result, code):
    found = [f for f in result["findings"] if f["code"] == code]
    assert found, f"no {code} in {result['findings']}"
    return found[0]


# ---------------------------------------------------------------- another prompt, sharing a prefix

def other_prompt(world, shared: int) -> list[int]:
    """Prompt 0's first `shared` ids, then other ids. With none shared, B's first id is one that
    A holds further on (a template token), so that a single equal id somewhere could pass for
    an alignment."""
    a = world.prompts[0].ids
    rest = [(t * 7 + 3) % 990 + 2 for t in world.prompts[1].ids[shared:]]
    ids = a[:shared] + rest
    if shared == 0:
        ids[0] = a[5]
    assert ids[shared] != a[shared] and len(set(ids[shared:shared + 4]) & {a[shared]}) == 0
    return ids


def late_capture(world, ids: list[int], *, shifted: bool):
    """An engine capture of `ids`; `shifted`: each row holds the previous token's state (so the
    states disagree with A's even on the shared tokens)."""
    b = world.capture(ids=ids)
    if shifted:
        for s in b.slots:
            s.tensor = torch.cat([s.tensor[:1], s.tensor[:-1]])
    return b
