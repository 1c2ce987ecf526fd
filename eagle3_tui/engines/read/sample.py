"""The normal form every on-disk schema is turned into, and the errors loading can raise.

Imports only the standard library (and results/, stdlib only) at module level; tensors are typed loosely so that
this module stays importable without torch (the UI reads the error classes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# the errors are declared with the shapes of results (error_result turns one into a result), the
# engines' ground floor; they are what loading raises, so they are named here too
from eagle3_tui.engines.results.errors import NotASample, SampleError

__all__ = ["NotASample", "Sample", "SampleError", "Slot", "blank_ids"]


@dataclass
class Slot:
    """One auxiliary (or final) hidden state [T, H] with what we know of where it came from."""

    tensor: Any  # torch.Tensor [T, H]
    label: str  # short name shown to the user: "aux0", "final"
    boundary: int | None = None  # boundary index b (0 = embeddings, i+1 = output of layer i)
    boundary_note: str | None = None  # e.g. "L" when b is the last boundary but L is unknown


@dataclass
class Sample:
    path: str
    schema: str
    slots: list[Slot]
    final: Slot | None = None
    final_norm: str | None = None  # "pre" | "post" | None
    ids: Any = None  # torch.Tensor [T] int64 or None
    loss_mask: Any = None  # torch.Tensor [T] or None
    source_keys: dict[str, str] = field(default_factory=dict)  # part -> where it came from
    assumptions: list[str] = field(default_factory=list)  # what we guessed, said to the user

    @property
    def tokens(self) -> int:
        if self.slots:
            return int(self.slots[0].tensor.shape[0])
        if self.final is not None:
            return int(self.final.tensor.shape[0])
        return 0

    @property
    def hidden(self) -> int:
        ref = self.slots[0] if self.slots else self.final
        return int(ref.tensor.shape[1]) if ref is not None else 0

    @property
    def dtype(self) -> str:
        ref = self.slots[0] if self.slots else self.final
        return str(ref.tensor.dtype).removeprefix("torch.") if ref is not None else "?"

    @property
    def trailing_padding(self) -> int:
        """Trailing rows with input_ids == 0 and loss_mask == 0 (SpecForge right padding).

        Only counted when both ids and loss mask are present: id 0 alone can be a real token.
        """
        if self.ids is None or self.loss_mask is None or not len(self.ids):
            return 0
        if int(self.ids[-1]) or int(self.loss_mask[-1]):
            return 0  # the usual case, without turning the whole of both into lists
        pad = 0
        ids = self.ids.tolist()
        mask = self.loss_mask.tolist()
        for i in range(len(ids) - 1, -1, -1):
            if ids[i] == 0 and mask[i] == 0:
                pad += 1
            else:
                break
        return pad

    @property
    def valid_len(self) -> int:
        return self.tokens - self.trailing_padding


def blank_ids(ids: Any) -> str | None:
    """Why a capture's token ids carry no information (all one value, padding usually: they would
    line B up with A's padding), None when they do. Such ids count as no ids: callers align and
    pair by hidden states and say so with this text. A single id is information."""
    if ids is None:
        return None
    values = ids.reshape(-1) if hasattr(ids, "reshape") else ids
    n = len(values)
    if n < 2:
        return None
    first = int(values[0])
    if hasattr(values, "eq"):
        same = bool(values.eq(first).all())
    else:
        same = all(int(v) == first for v in values)
    return f"its {n} token ids are all {first}" if same else None
