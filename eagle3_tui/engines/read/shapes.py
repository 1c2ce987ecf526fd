"""The shape and type checks every schema reader applies (schema.py): matrices and vectors of
the right rank, known keys holding tensors, a width split into k slots of H, one line naming
what is wrong. torch and the standard library only (shipped to the box)."""

from __future__ import annotations

from typing import Any

from eagle3_tui.engines.read.sample import Sample, SampleError, Slot

DEFAULT_K = 3
#: the CLI's way to set the split; the TUI, which takes no --slots/--hidden, leaves it out
SPLIT_ADVICE = "use --slots/--hidden to say otherwise"
IDS_KEYS = ("input_ids", "token_ids", "ids")

def _same_shapes(mats: list, name: str) -> None:
    """Slots of one capture share T and H; say which of the two differs, with the values."""
    rows = [int(m.shape[0]) for m in mats]
    widths = [int(m.shape[1]) for m in mats]
    if len(set(widths)) > 1:
        raise SampleError(f"{name} items have different widths: {', '.join(map(str, widths))} (one H expected)")
    if len(set(rows)) > 1:
        raise SampleError(f"{name} items have different lengths: {', '.join(map(str, rows))} rows")


def _split_width(width: int, slots: int | None, hidden: int | None) -> tuple[int, int, str | None]:
    """(k, H, what was assumed) for a [T, k*H] tensor."""
    if hidden is not None:
        if width % hidden:
            raise SampleError(f"width {width} is not divisible by the given hidden size {hidden}")
        k = width // hidden
        if slots is not None and slots != k:
            raise SampleError(f"--slots {slots} and --hidden {hidden} disagree with width {width}")
        return k, hidden, None
    if slots is not None:
        if width % slots:
            raise SampleError(f"width {width} is not divisible by the given k = {slots}")
        return slots, width // slots, None
    if width % DEFAULT_K == 0:
        return (
            DEFAULT_K,
            width // DEFAULT_K,
            f"k = {DEFAULT_K} slots of H = {width // DEFAULT_K} (width {width}); {SPLIT_ADVICE}",
        )
    return 1, width, f"k = 1 slot of H = {width} (width {width} is not a multiple of 3)"


def _squeeze(t):
    """Drop one leading batch dimension of 1 from a rank >= 3 tensor."""
    return t[0] if t.dim() >= 3 and t.shape[0] == 1 else t


def _matrix(t, name: str):
    """A [T, H] floating-point view of `t`, squeezing a leading batch dimension of 1."""
    x = _squeeze(t)
    if x.dim() != 2:
        raise SampleError(
            f"{name} has shape {_shape(t)}: expected [T, H] or [1, T, H] (rank {t.dim()} is not supported)"
        )
    if not x.is_floating_point():
        raise SampleError(
            f"{name} holds {str(x.dtype).removeprefix('torch.')} values where hidden states "
            "(floating point) are expected"
        )
    return x


def _dtype(t) -> str:
    return str(t.dtype).removeprefix("torch.")


def _vector(t, name: str):
    # lazy: torch: loaded when used, never at start-up
    import torch

    x = t
    while x.dim() > 1 and x.shape[0] == 1:
        x = x[0]
    if x.dim() != 1:
        raise SampleError(f"{name} has shape {_shape(t)}: expected [T]")
    if name in IDS_KEYS and (x.is_floating_point() or x.is_complex() or x.dtype == torch.bool):
        # Not accepted even when the values look integral: float16/bfloat16 cannot hold ids above
        # 2048/256 exactly, so a float ids tensor has usually lost its ids already, and comparing
        # token by token on them would report drift that is not in the data.
        raise SampleError(f"{name} holds {_dtype(x)} values: token ids must be integers")
    return x


def _check(sample: Sample) -> None:
    if not sample.slots and sample.final is None:
        raise SampleError("not a hidden-state sample: no hidden states found")
    parts = [*sample.slots, *([sample.final] if sample.final is not None else [])]
    t = parts[0].tensor.shape[0]
    for part in parts:
        if part.tensor.shape[0] != t:
            raise SampleError(
                f"{part.label} has {part.tensor.shape[0]} rows but {parts[0].label} has {t}"
            )
    if t == 0:
        raise SampleError("zero-length sequence (T = 0): nothing to inspect")
    if sample.hidden == 0:
        raise SampleError("hidden size is 0: nothing to inspect")
    for name, vec in (("input_ids", sample.ids), ("loss_mask", sample.loss_mask)):
        if vec is not None and vec.shape[0] != t:
            raise SampleError(f"{name} has {vec.shape[0]} entries but the hidden states have {t} rows")


def _describe(v: Any) -> str:
    # lazy: torch: loaded when used, never at start-up
    import torch

    if isinstance(v, torch.Tensor):
        return f"{_shape(v)} {str(v.dtype).removeprefix('torch.')}"
    if isinstance(v, (list, tuple)):
        return f"{type(v).__name__} of {len(v)}"
    return type(v).__name__


def _shape(t) -> str:
    return "[" + ", ".join(str(d) for d in t.shape) + "]"


def split_like(b: Sample, a: Sample) -> Sample:
    """A bare capture `b` whose width the loader split by guesswork, re-split with training sample
    `a`'s hidden size (compare and an id borrowing line the two up after this)."""
    import torch  # lazy: importing the engines never imports torch (start-up)

    # the loader says what it guessed; slots cut from one tensor can be cut again
    guessed = bool(b.assumptions) and "split into" in b.source_keys.get("slots", "")
    if not guessed or not b.slots or not a.hidden or b.hidden == a.hidden:
        return b
    width = sum(s.tensor.shape[1] for s in b.slots)
    if width % a.hidden:
        return b
    whole = torch.cat([s.tensor for s in b.slots], dim=1) if len(b.slots) > 1 else b.slots[0].tensor
    k = width // a.hidden
    b.slots = [Slot(whole[:, i * a.hidden:(i + 1) * a.hidden], f"aux{i}") for i in range(k)]
    b.assumptions = [f"k = {k} slots of H = {a.hidden} (width {width}), H taken from the training sample"]
    return b
