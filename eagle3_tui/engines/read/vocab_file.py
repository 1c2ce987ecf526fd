"""A draft vocabulary file (`vocab_mapping.pt`, SpecForge's {"d2t", "t2d"}) read and checked: the
mapping itself, and what the file holds for the summary of this non-sample (read/stats.py). What a
scan or a sample view counts with it lives in engines/model/vocab.py.

Loaded with torch.load(weights_only=True) only. Shipped to the box: torch and stdlib only.
"""

from __future__ import annotations

import os
from typing import Any

from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.read.load import read_object
from eagle3_tui.engines.read.sample import SampleError


class VocabError(SampleError):
    """Not a usable vocab mapping."""


class VocabMapping:
    """t2d as a bool tensor [V] and the draft ids' target ids, checked against each other."""

    def __init__(self, t2d: Any, d2t: Any, file: str) -> None:
        self.t2d = t2d
        self.d2t = d2t
        self.file = file
        self.target = int(t2d.numel())
        self.draft = int(d2t.numel())

    def in_draft(self, ids: Any) -> Any:
        """A bool tensor: which of `ids` (an int tensor) the drafter can propose; ids past the
        target vocabulary count as outside."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        ids = ids.long()
        inside = ids.lt(self.target) & ids.ge(0)
        out = torch.zeros(ids.shape, dtype=torch.bool)
        out[inside] = self.t2d[ids[inside]]
        return out


def load_mapping(path: str) -> VocabMapping:
    """The mapping in `path`, loaded as samples are (load.read_object: weights_only, torch's
    warnings and advice kept off stderr, one line for a file it refuses)."""
    if not os.path.exists(path):
        raise VocabError(f"{path}: no such vocab mapping file")
    try:
        obj, _ = read_object(path)
    except SampleError as err:  # a torch below 2.10 (torch_gate) says so in its own words
        said = str(err) if torch_gate.refused(str(err)) else f"not a vocab mapping ({err})"
        raise VocabError(f"{path}: {said}") from None
    except Exception as err:  # noqa: BLE001 - unpickling raises anything; one line says which file
        raise VocabError(f"{path}: not a vocab mapping ({type(err).__name__})") from None
    return mapping_from(obj, path)


def mapping_from(obj: Any, path: str) -> VocabMapping:
    # lazy: torch: loaded when used, never at start-up
    import torch

    if not isinstance(obj, dict) or not {"d2t", "t2d"} <= set(obj):
        raise VocabError(f"{path}: not a vocab mapping (no d2t and t2d)")
    d2t, t2d = obj["d2t"], obj["t2d"]
    if not (isinstance(d2t, torch.Tensor) and isinstance(t2d, torch.Tensor)) or d2t.dim() != 1 or t2d.dim() != 1:
        raise VocabError(f"{path}: d2t and t2d must be one-dimensional tensors")
    t2d = t2d.bool()
    draft = d2t.numel()
    if int(t2d.sum()) != draft:
        raise VocabError(f"{path}: t2d marks {int(t2d.sum())} target tokens but d2t has {draft}")
    targets = check_offsets(d2t, t2d.numel(), path)
    if draft and not bool(t2d[targets].all()):
        raise VocabError(f"{path}: d2t points at target ids that t2d does not mark")
    return VocabMapping(t2d, d2t, path)


def check_offsets(d2t: Any, target: int, where: str) -> Any:
    """The target ids d2t's offsets give (draft id + d2t[draft id]), checked to lie inside a
    target vocabulary of `target` ids; VocabError otherwise. Used for vocab_mapping.pt and for a
    drafter's own d2t (engines/model/drafter.py)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if d2t.is_floating_point() or d2t.is_complex():
        raise VocabError(f"{where}: d2t holds {str(d2t.dtype).removeprefix('torch.')} values, not whole-number offsets")
    targets = torch.arange(d2t.numel()) + d2t.long()
    if d2t.numel() and (int(targets.min()) < 0 or int(targets.max()) >= target):
        bad = int(targets.min()) if int(targets.min()) < 0 else int(targets.max())
        raise VocabError(f"{where}: d2t points at target id {bad}, outside the target vocabulary of {target}")
    return targets


def describe_file(path: str) -> dict[str, Any]:
    """What a vocab mapping file holds, for the summary of this non-sample: {"draft", "target",
    "share" (of the target vocabulary), "identity", "first_ids"}."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    m = load_mapping(path)
    targets = (m.d2t.long() + torch.arange(m.draft))[:16].tolist()
    return {"draft": m.draft, "target": m.target, "share": m.draft / m.target if m.target else None,
            "identity": m.draft == m.target, "first_ids": targets}
