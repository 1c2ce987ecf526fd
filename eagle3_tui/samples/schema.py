"""Detect a file's schema from its keys and shapes, and normalise it to a Sample.

Schemas (FORMATS.md): SpecForge offline, EAGLE-1/2, speculators current (safetensors) and
legacy, and what inference dumps look like (bare tensor, list of k tensors, partial dicts).
A leading batch dimension of 1 is squeezed everywhere.
"""

from __future__ import annotations

import json
from typing import Any

from eagle3_tui.samples.sample import NotASample, Sample, SampleError, Slot

IDS_KEYS = ("input_ids", "token_ids", "ids")
DEFAULT_K = 3


def normalize(
    obj: Any,
    *,
    path: str,
    slots: int | None = None,
    hidden: int | None = None,
    metadata: dict[str, str] | None = None,
) -> Sample:
    import torch

    if slots is not None and slots < 1:
        raise SampleError(f"--slots must be at least 1 (got {slots})")
    if hidden is not None and hidden < 1:
        raise SampleError(f"--hidden must be at least 1 (got {hidden})")

    if isinstance(obj, torch.Tensor):
        sample = _from_bare_tensor(obj, path, slots, hidden, schema="bare tensor", key=None)
    elif isinstance(obj, (list, tuple)):
        sample = _from_list(obj, path, schema=f"{type(obj).__name__} of tensors", key=None)
    elif isinstance(obj, dict):
        sample = _from_dict(obj, path, slots, hidden, metadata or {})
    else:
        raise SampleError(f"not a hidden-state sample: the file holds a {type(obj).__name__}")
    _check(sample)
    return sample


# ---------------------------------------------------------------------------- dicts


def _from_dict(d: dict, path: str, slots, hidden, metadata: dict[str, str]) -> Sample:
    import torch

    tensors = {k: v for k, v in d.items() if isinstance(v, torch.Tensor)}
    lists = {
        k: v
        for k, v in d.items()
        if isinstance(v, (list, tuple)) and v and all(isinstance(t, torch.Tensor) for t in v)
    }
    if not tensors and not lists:
        keys = ", ".join(map(str, list(d)[:8])) or "none"
        raise SampleError(f"not a hidden-state sample: the dict holds no tensors (keys: {keys})")

    ids_key = next((k for k in IDS_KEYS if k in tensors), None)
    ids = _vector(tensors[ids_key], ids_key) if ids_key else None
    mask = _vector(tensors["loss_mask"], "loss_mask") if "loss_mask" in tensors else None

    if "aux_hidden_state" in tensors:
        sample = _specforge(tensors, path, slots, hidden)
    elif "hidden_states" in lists:
        sample = _speculators_legacy(lists["hidden_states"], path)
    elif "hidden_states" in tensors and _squeeze(tensors["hidden_states"]).dim() == 3:
        sample = _speculators_current(tensors["hidden_states"], path, metadata)
    elif "hidden_states" in tensors:
        sample = _from_bare_tensor(
            tensors["hidden_states"], path, slots, hidden, schema="dict with hidden_states", key="hidden_states"
        )
    elif "hidden_state" in tensors:
        final = _matrix(tensors["hidden_state"], "hidden_state")
        sample = Sample(
            path=path,
            schema="EAGLE-1/2",
            slots=[],
            final=Slot(final, "final"),
            final_norm="post",
            source_keys={"final": "hidden_state (after the final norm)"},
        )
    else:
        sample = _from_unknown_dict(d, tensors, path, slots, hidden)

    sample.ids = ids
    sample.loss_mask = mask
    if ids_key:
        sample.source_keys["ids"] = ids_key
    if mask is not None:
        sample.source_keys["loss_mask"] = "loss_mask"
    return sample


def _specforge(tensors: dict, path: str, slots, hidden) -> Sample:
    aux = _matrix(tensors["aux_hidden_state"], "aux_hidden_state")
    final = _matrix(tensors["hidden_state"], "hidden_state") if "hidden_state" in tensors else None
    width = aux.shape[1]
    assumptions: list[str] = []
    if final is not None and hidden is None:
        h = final.shape[1]
        if width % h:
            raise SampleError(
                f"aux_hidden_state width {width} is not a multiple of hidden_state width {h}"
            )
        k = width // h
        if slots is not None and slots != k:
            raise SampleError(f"--slots {slots} disagrees with the file: width {width} = {k} x {h}")
    else:
        k, h, note = _split_width(width, slots, hidden)
        if note:
            assumptions.append(note)
    parts = [Slot(aux[:, i * h : (i + 1) * h], f"aux{i}") for i in range(k)]
    sample = Sample(
        path=path,
        schema="SpecForge offline",
        slots=parts,
        final=Slot(final, "final") if final is not None else None,
        final_norm="post" if final is not None else None,
        source_keys={"slots": f"aux_hidden_state split into {k} x {h}"},
        assumptions=assumptions,
    )
    if final is not None:
        sample.source_keys["final"] = "hidden_state (after the final norm)"
    return sample


def _speculators_legacy(states: list, path: str) -> Sample:
    mats = [_matrix(t, f"hidden_states[{i}]") for i, t in enumerate(states)]
    if len(mats) < 2:
        return _from_list(states, path, schema="speculators (legacy)", key="hidden_states")
    *aux, final = mats
    return Sample(
        path=path,
        schema="speculators (legacy)",
        slots=[Slot(t, f"aux{i}") for i, t in enumerate(aux)],
        final=Slot(final, "final", boundary_note="L"),
        final_norm="pre",
        source_keys={
            "slots": f"hidden_states[0..{len(aux) - 1}]",
            "final": f"hidden_states[{len(aux)}] (before the final norm)",
        },
    )


def _speculators_current(states, path: str, metadata: dict[str, str]) -> Sample:
    x = _squeeze(states)
    if x.shape[1] < 2:
        raise SampleError(f"hidden_states has shape {_shape(x)}: expected [T, k+1, H] with k >= 1")
    k = x.shape[1] - 1
    boundaries = _layer_ids_from_metadata(metadata, k)
    slots = [
        Slot(x[:, i, :], f"aux{i}", boundary=boundaries[i] if boundaries else None) for i in range(k)
    ]
    return Sample(
        path=path,
        schema="speculators",
        slots=slots,
        final=Slot(x[:, k, :], "final", boundary_note="L"),
        final_norm="pre",
        source_keys={
            "slots": f"hidden_states[:, 0..{k - 1}, :]",
            "final": f"hidden_states[:, {k}, :] (before the final norm)",
        },
    )


def _layer_ids_from_metadata(metadata: dict[str, str], k: int) -> list[int] | None:
    """speculators: slot i is the input of layer id, so boundary b = id (when ids are recorded)."""
    for key in ("layer_ids", "layers", "aux_layer_ids"):
        if key in metadata:
            try:
                ids = json.loads(metadata[key])
            except ValueError:
                continue
            if isinstance(ids, list) and len(ids) == k and all(isinstance(i, int) for i in ids):
                return ids
    return None


def _from_unknown_dict(d: dict, tensors: dict, path: str, slots, hidden) -> Sample:
    floats = {k: v for k, v in tensors.items() if v.is_floating_point() and v.dim() in (2, 3)}
    if len(floats) == 1:
        (key, t), = floats.items()
        return _from_bare_tensor(t, path, slots, hidden, schema=f"dict with {key}", key=key)
    contents = {str(k): _describe(v) for k, v in d.items()}
    listing = ", ".join(f"{k} {v}" for k, v in list(contents.items())[:6])
    if not floats:
        reason = "no floating-point tensor of rank 2 or 3"
    else:
        reason = f"{len(floats)} candidate tensors and no known key"
    raise NotASample(f"not a hidden-state sample ({reason}): {listing}", contents)


# ---------------------------------------------------------------------------- tensors


def _from_bare_tensor(t, path: str, slots, hidden, *, schema: str, key: str | None) -> Sample:
    x = _matrix(t, key or "tensor")
    k, h, note = _split_width(x.shape[1], slots, hidden)
    sample = Sample(
        path=path,
        schema=schema,
        slots=[Slot(x[:, i * h : (i + 1) * h], f"aux{i}") for i in range(k)],
        source_keys={"slots": f"{key or 'tensor'} split into {k} x {h}"},
    )
    if note:
        sample.assumptions.append(note)
    return sample


def _from_list(items, path: str, *, schema: str, key: str | None) -> Sample:
    import torch

    if not items:
        raise SampleError("not a hidden-state sample: empty list")
    if not all(isinstance(t, torch.Tensor) for t in items):
        kinds = sorted({type(t).__name__ for t in items})
        raise SampleError(f"not a hidden-state sample: a list of {', '.join(kinds)}")
    mats = [_matrix(t, f"{key or 'item'}[{i}]") for i, t in enumerate(items)]
    shapes = {tuple(m.shape) for m in mats}
    if len(shapes) > 1:
        raise SampleError(f"list items have different shapes: {', '.join(map(str, sorted(shapes)))}")
    return Sample(
        path=path,
        schema=schema,
        slots=[Slot(m, f"aux{i}") for i, m in enumerate(mats)],
        source_keys={"slots": f"{key or 'list'} items 0..{len(mats) - 1}"},
    )


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
            f"k = {DEFAULT_K} slots of H = {width // DEFAULT_K} (width {width}); "
            "use --slots/--hidden to say otherwise",
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


def _vector(t, name: str):
    x = t
    while x.dim() > 1 and x.shape[0] == 1:
        x = x[0]
    if x.dim() != 1:
        raise SampleError(f"{name} has shape {_shape(t)}: expected [T]")
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
    import torch

    if isinstance(v, torch.Tensor):
        return f"{_shape(v)} {str(v.dtype).removeprefix('torch.')}"
    if isinstance(v, (list, tuple)):
        return f"{type(v).__name__} of {len(v)}"
    return type(v).__name__


def _shape(t) -> str:
    return "[" + ", ".join(str(d) for d in t.shape) + "]"
