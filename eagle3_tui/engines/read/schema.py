"""Detect a file's schema from its keys and shapes, and normalise it to a Sample.

Schemas (FORMATS.md, docs/formats.md): SpecForge offline, EAGLE-1/2, speculators current
(safetensors, also its FP8 connector) and legacy, NVIDIA ModelOpt's offline dumps (HF, vLLM and
TRT-LLM scripts) and TensorRT-LLM's own SaveHiddenStates records, and what inference dumps look
like (bare tensor, list of k tensors, partial dicts). A leading batch dimension of 1 is squeezed.
"""

from __future__ import annotations

import json
from typing import Any

from eagle3_tui.engines.read.sample import NotASample, Sample, SampleError, Slot
from eagle3_tui.engines.read.shapes import (  # the checks every schema applies
    IDS_KEYS,
    _check,
    _describe,
    _dtype,
    _matrix,
    _same_shapes,
    _shape,
    _split_width,
    _squeeze,
    _vector,
)

SCALES_KEY = "hidden_states_scales"  # speculators' FP8 connector: one float32 scale per token
# Keys whose meaning we know: a value of another type is a broken file, not another schema.
TENSOR_KEYS = (*IDS_KEYS, "loss_mask", "hidden_state", "aux_hidden_state", "aux_hidden_states", SCALES_KEY)
TENSOR_OR_LIST_KEYS = ("hidden_states",)


def normalize(
    obj: Any,
    *,
    path: str,
    slots: int | None = None,
    hidden: int | None = None,
    metadata: dict[str, str] | None = None,
) -> Sample:
    # lazy: torch: loaded when used, never at start-up
    import torch

    if slots is not None and slots < 1:
        raise SampleError(f"--slots must be at least 1 (got {slots})")
    if hidden is not None and hidden < 1:
        raise SampleError(f"--hidden must be at least 1 (got {hidden})")

    if isinstance(obj, torch.Tensor):
        sample = _from_bare_tensor(obj, path, slots, hidden, schema="bare tensor", key=None)
    elif isinstance(obj, (list, tuple)) and obj and all(isinstance(x, dict) for x in obj):
        sample = _from_records(obj, path, slots, hidden, metadata or {})
    elif isinstance(obj, (list, tuple)):
        sample = _from_list(obj, path, schema=f"{type(obj).__name__} of tensors", key=None)
    elif isinstance(obj, dict):
        sample = _from_dict(obj, path, slots, hidden, metadata or {})
    else:
        raise SampleError(f"not a hidden-state sample: the file holds a {type(obj).__name__}")
    _check(sample)
    return sample


# ---------------------------------------------------------------------------- dicts


def _from_records(records, path: str, slots, hidden, metadata: dict[str, str]) -> Sample:
    """TensorRT-LLM's SaveHiddenStates writes a list of per-request dicts, one per file when
    write_interval is 1 (what ModelOpt's dump script expects), several otherwise."""
    sample = _from_dict(records[0], path, slots, hidden, metadata)
    if len(records) > 1:
        sample.assumptions.append(
            f"the file holds {len(records)} records (TensorRT-LLM write_interval > 1); showing record 0"
        )
    sample.source_keys["record"] = f"0 of {len(records)}"
    return sample


def _from_dict(d: dict, path: str, slots, hidden, metadata: dict[str, str]) -> Sample:
    # lazy: torch: loaded when used, never at start-up
    import torch

    _check_known_types(d)
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
    elif "aux_hidden_states" in tensors or (
        "conversation_id" in d and "hidden_states" in tensors and _squeeze(tensors["hidden_states"]).dim() == 2
    ):
        sample = _modelopt(d, tensors, path, slots, hidden)
    elif "hidden_states" in lists:
        sample = _speculators_legacy(list(lists["hidden_states"]), path)
    elif "hidden_states" in tensors and _squeeze(tensors["hidden_states"]).dim() == 3:
        sample = _speculators_current(tensors["hidden_states"], tensors.get(SCALES_KEY), path, metadata)
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
        sample = _from_unknown_dict(d, tensors, lists, path, slots, hidden)

    sample.ids = ids
    sample.loss_mask = mask
    if ids_key:
        sample.source_keys["ids"] = ids_key
    if mask is not None:
        sample.source_keys["loss_mask"] = "loss_mask"
    return sample


def _split_aux(aux, final, slots, hidden, names: tuple[str, str]) -> tuple[int, int, list[str]]:
    """(k, H, assumptions) for auxiliary states [T, k*H] stored next to a final state [T, H]."""
    width = aux.shape[1]
    if final is not None and hidden is None:
        h = final.shape[1]
        if width % h:
            raise SampleError(f"{names[0]} width {width} is not a multiple of {names[1]} width {h}")
        k = width // h
        if slots is not None and slots != k:
            raise SampleError(f"--slots {slots} disagrees with the file: width {width} = {k} x {h}")
        return k, h, []
    k, h, note = _split_width(width, slots, hidden)
    return k, h, [note] if note else []


def _specforge(tensors: dict, path: str, slots, hidden) -> Sample:
    aux = _matrix(tensors["aux_hidden_state"], "aux_hidden_state")
    final = _matrix(tensors["hidden_state"], "hidden_state") if "hidden_state" in tensors else None
    k, h, assumptions = _split_aux(aux, final, slots, hidden, ("aux_hidden_state", "hidden_state"))
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


def _modelopt(d: dict, tensors: dict, path: str, slots, hidden) -> Sample:
    """NVIDIA ModelOpt's offline dumps ({conversation_id}.pt) and the TensorRT-LLM records they
    are made from. The HF and TRT-LLM scripts store the normed model output as the final state;
    the vLLM script stores the final residual before the norm under the same keys, which the file
    cannot tell apart: say what was assumed."""
    final_key = "hidden_states" if "hidden_states" in tensors else "hidden_state" if "hidden_state" in tensors else None
    final = _matrix(tensors[final_key], final_key) if final_key else None
    aux = tensors.get("aux_hidden_states")
    assumptions: list[str] = []
    parts: list[Slot] = []
    source_keys: dict[str, str] = {}
    if aux is not None and aux.numel() == 0 and final is not None:
        # ModelOpt's vLLM script writes torch.empty(0) when only the final layer was extracted
        source_keys["slots"] = "aux_hidden_states is empty (no auxiliary layer was captured)"
    elif aux is not None:
        aux = _matrix(aux, "aux_hidden_states")
        k, h, assumptions = _split_aux(aux, final, slots, hidden, ("aux_hidden_states", final_key or "hidden_states"))
        parts = [Slot(aux[:, i * h : (i + 1) * h], f"aux{i}") for i in range(k)]
        # ModelOpt's HF script indexes HF's hidden_states tuple (index = b); the file keeps no ids
        source_keys["slots"] = f"aux_hidden_states split into {k} x {h}"
    schema = "ModelOpt offline" if "conversation_id" in d or final_key != "hidden_state" else "TensorRT-LLM SaveHiddenStates"
    if final is not None:
        source_keys["final"] = f"{final_key} (the model output after the final norm)"
        if schema == "ModelOpt offline":
            assumptions.append(
                "final read as after the final norm (ModelOpt's HF and TRT-LLM dumps); "
                "its vLLM dump writes the same keys with the final residual before the norm"
            )
    if "conversation_id" in d:
        source_keys["conversation_id"] = str(d["conversation_id"])[:80]
    return Sample(
        path=path,
        schema=schema,
        slots=parts,
        final=Slot(final, "final") if final is not None else None,
        final_norm="post" if final is not None else None,
        source_keys=source_keys,
        assumptions=assumptions,
    )


def _speculators_legacy(states: list, path: str) -> Sample:
    mats = [_matrix(t, f"hidden_states[{i}]") for i, t in enumerate(states)]
    if len(mats) < 2:
        return _from_list(states, path, schema="speculators (legacy)", key="hidden_states")
    _same_shapes(mats, "hidden_states")
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


def _speculators_current(states, scales, path: str, metadata: dict[str, str]) -> Sample:
    x = _squeeze(states)
    if x.shape[1] < 2:
        raise SampleError(f"hidden_states has shape {_shape(x)}: expected [T, k+1, H] with k >= 1")
    x, notes = _dequantize(x, scales)
    k = x.shape[1] - 1
    boundaries = _layer_ids_from_metadata(metadata, k)
    slots = [
        Slot(x[:, i, :], f"aux{i}", boundary=boundaries[i] if boundaries else None) for i in range(k)
    ]
    source_keys = {
        "slots": f"hidden_states[:, 0..{k - 1}, :]",
        "final": f"hidden_states[:, {k}, :] (before the final norm)",
    }
    if scales is not None:
        source_keys["dequantized"] = f"hidden_states x {SCALES_KEY} (one scale per token)"
    return Sample(
        path=path,
        schema="speculators (FP8)" if scales is not None else "speculators",
        slots=slots,
        final=Slot(x[:, k, :], "final", boundary_note="L"),
        final_norm="pre",
        source_keys=source_keys,
        assumptions=notes,
    )


def _dequantize(x, scales):
    """speculators' FP8 connector: values = fp8 * per-token scale, in float32. Float8 without
    scales is widened as is (its magnitudes are then unknown, and said so)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    fp8 = str(x.dtype).startswith("torch.float8")
    if scales is None:
        if not fp8:
            return x, []
        name = str(x.dtype).removeprefix("torch.")
        return x.float(), [f"hidden_states is {name} with no {SCALES_KEY}: values read unscaled"]
    t = x.shape[0]
    if scales.numel() != t or (scales.dim() > 1 and scales.shape[0] != t):
        raise SampleError(
            f"{SCALES_KEY} has shape {_shape(scales)}: expected one scale per token ([{t}, 1, 1])"
        )
    if not scales.is_floating_point():
        raise SampleError(f"{SCALES_KEY} holds {_dtype(scales)} values where float scales are expected")
    name = _dtype(x)
    out = x.to(torch.float32) * scales.reshape(t, 1, 1).to(torch.float32)
    return out, [f"dequantized: hidden_states ({name}) x {SCALES_KEY} per token, read as float32"]


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


def _from_unknown_dict(d: dict, tensors: dict, lists: dict, path: str, slots, hidden) -> Sample:
    floats = {k: v for k, v in tensors.items() if v.is_floating_point() and v.dim() in (2, 3)}
    if len(floats) == 1:
        (key, t), = floats.items()
        return _from_bare_tensor(t, path, slots, hidden, schema=f"dict with {key}", key=key)
    if not floats and len(lists) == 1:
        (key, items), = lists.items()
        return _from_list(items, path, schema=f"dict with a list {key}", key=key)
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
    # lazy: torch: loaded when used, never at start-up
    import torch

    if not items:
        raise SampleError("not a hidden-state sample: empty list")
    if not all(isinstance(t, torch.Tensor) for t in items):
        kinds = sorted({type(t).__name__ for t in items})
        raise SampleError(f"not a hidden-state sample: a list of {', '.join(kinds)}")
    mats = [_matrix(t, f"{key or 'item'}[{i}]") for i, t in enumerate(items)]
    _same_shapes(mats, key or "list")
    return Sample(
        path=path,
        schema=schema,
        slots=[Slot(m, f"aux{i}") for i, m in enumerate(mats)],
        source_keys={"slots": f"{key or 'list'} items 0..{len(mats) - 1}"},
    )


def _check_known_types(d: dict) -> None:
    # lazy: torch: loaded when used, never at start-up
    import torch

    for key in TENSOR_KEYS:
        if key in d and not isinstance(d[key], torch.Tensor):
            raise SampleError(f"{key} holds a {_kind(d[key])} where a tensor is expected")
    for key in TENSOR_OR_LIST_KEYS:
        if key not in d:
            continue
        v = d[key]
        if isinstance(v, torch.Tensor):
            continue
        if isinstance(v, (list, tuple)) and v and all(isinstance(t, torch.Tensor) for t in v):
            continue
        raise SampleError(f"{key} holds a {_kind(v)} where a tensor or a list of tensors is expected")


def _kind(v: Any) -> str:
    # lazy: torch: loaded when used, never at start-up
    import torch

    if isinstance(v, (list, tuple)):
        inner = sorted({"tensor" if isinstance(t, torch.Tensor) else type(t).__name__ for t in v})
        return f"{type(v).__name__} of {', '.join(inner)}" if inner else f"empty {type(v).__name__}"
    return type(v).__name__
