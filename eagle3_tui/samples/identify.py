"""Which layer is this? Match every slot of a sample against every boundary of the target model.

The model (a Hugging Face folder next to the data) runs once on the sample's own token ids. Forward
hooks see the residual stream at each boundary as it passes: b = 0 is the input of decoder layer 0
(what HF calls hidden_states[0], after any embedding scale), b = i + 1 the output of layer i,
b = L the output of the last layer (the final norm's input), plus the final norm's output. Each
hook reduces its boundary at once to per-part numbers (mean cosine and median norm ratio of every
slot and the final state against it) and lets the activations go: memory stays at one layer's
activations instead of L + 1 of them, and the model runs without its LM head and KV cache.

Thresholds, from measured noise (tests/identify/test_thresholds.py measures it again). An 8-layer
Llama (hidden 64, random weights, RMSNorm gains drawn in [0.5, 1.5]) run in bf16, three prompts,
against the same weights in float32, slots at every boundary and the post-norm state:
  - the true boundary: mean cosine >= 0.9996, median norm ratio within 1 +- 0.0021;
  - adjacent boundaries: mean cosine <= 0.945; the post-norm state against b = L: 0.951..0.955;
  - another prompt's states: best mean cosine <= 0.06.
The 16-layer, hidden-1024 Llama of bench/bench_identify.py (bf16-rounded float32 states) gives
adjacent boundaries up to 0.955 in its upper layers. Real models are deeper and a middle layer adds
a small update, so adjacent boundaries come closer: "matches" asks a mean cosine of 0.99 (25x the
measured 1 - cosine) and the runner-up and margin are always reported (two boundaries above 0.99
give an info finding, slot_ambiguous). A match whose median norm ratio is off by more than 2% (10x
the drift) is called scaled. A best cosine under 0.99 is not a boundary of this model on these
tokens: noised or quantised down to UNRELATED_COS (0.5, halfway to the other-prompt level), another
model or another prompt below it.

torch and the standard library at module level; transformers is imported inside functions (the
optional `model` extra), and this module is shipped to the remote box with the rest of samples/.
"""

from __future__ import annotations

import math
import os
import threading
from typing import Any

from eagle3_tui.samples.conventions import (
    ConfigError,
    convention_finding,
    drafter_layer_ids,
    num_layers,
    text_config,
)
from eagle3_tui.samples.folder_config import read_model_config
from eagle3_tui.samples.results import error_result, sort_findings
from eagle3_tui.samples.sample import NotASample, Sample, SampleError, Slot
from eagle3_tui.samples.stats import Cancelled

#: mean cosine at or above which a slot holds the states of a boundary (noise: >= 0.9996)
MATCH_COS = 0.99
#: |median norm ratio - 1| beyond which a matched slot differs by a scale (noise: <= 0.0021)
SCALE_TOL = 0.02
#: best mean cosine below which a slot is from another model or prompt, not a noisy capture
UNRELATED_COS = 0.5
#: rows per chunk when a boundary is reduced against the slots (caps the float32 temporaries)
CHUNK_ROWS = 256
INSTALL = "pip install eagle3-tui[model]"


class IdentifyError(Exception):
    """Unusable input (not a model folder, width that does not fit, no transformers). One line."""


# ------------------------------------------------------------------------------ entry points


def identify_file(
    path: str,
    model: str,
    *,
    drafter: str | None = None,
    tokens: int | None = None,
    device: str = "auto",
    ids_from: str | None = None,
    slots: int | None = None,
    hidden: int | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    """The identify JSON object for one file; unusable input gives {"path", "model", "error"}."""
    from eagle3_tui.samples.load import load_sample

    try:
        config = model_config(model)
        drafter_ids = drafter_layer_ids(drafter) if drafter else None
        sample = _load(load_sample, path, "", slots=slots, hidden=hidden)
        ids = None
        if ids_from:
            other = _load(load_sample, ids_from, "--ids-from ")
            if other.ids is None:
                raise IdentifyError(f"--ids-from {ids_from}: that sample has no token ids either")
            ids = other.ids[: other.valid_len]
        return identify(sample, model, config=config, ids=ids, tokens=tokens, device=device,
                        drafter_ids=drafter_ids, cancel=cancel)
    except (IdentifyError, ConfigError) as err:
        return error_result(path, str(err), model=model)
    except MemoryError as err:
        return error_result(path, err, model=model)


def _load(load_sample, path: str, what: str, **kw) -> Sample:
    try:
        return load_sample(path, **kw)
    except NotASample as err:
        raise IdentifyError(f"{what}{path}: {err}") from None
    except SampleError as err:
        raise IdentifyError(f"{what}{path}: {err}") from None


def model_config(model: str) -> dict[str, Any]:
    """config.json of a model folder, every value checked (samples/folder_config.py): a decoder
    folder whose layer count, widths and vocabulary fit the weights it holds."""
    return read_model_config(model).raw


def identify(
    sample: Sample,
    model: str,
    *,
    config: dict[str, Any] | None = None,
    ids=None,
    tokens: int | None = None,
    device: str = "auto",
    drafter_ids: tuple[list[int], str] | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    """Identify every slot (and the final state) of `sample` against the model in folder `model`.

    `ids` replaces the sample's own token ids (a capture without ids); `tokens` caps the rows.
    Raises IdentifyError on unusable input and Cancelled when `cancel` is set.
    """
    config = config or model_config(model)
    inner = text_config(config)
    layers, width = num_layers(config), inner["hidden_size"]
    if sample.hidden != width:
        sample = _resplit(sample, width)
    if sample.hidden != width:
        raise IdentifyError(
            f"{sample.path}: slots are {sample.hidden} wide but the model's hidden size is {width}: "
            "captured from another model"
        )
    if ids is None:
        if sample.ids is None:
            raise IdentifyError(f"{sample.path}: no token ids in the file; give --ids-from OTHER_SAMPLE")
        ids = sample.ids[: sample.valid_len]
    n = min(len(ids), sample.tokens)
    if tokens is not None:
        n = min(n, tokens)
    if n < 1:
        raise IdentifyError(f"{sample.path}: no valid tokens to run the model on")
    check_ids(ids[:n], inner.get("vocab_size"), f"{sample.path}", model)
    parts = [s.tensor[:n] for s in sample.slots] + ([sample.final.tensor[:n]] if sample.final else [])
    cos, ratio, info = score_boundaries(model, ids[:n], parts, layers, device=device, cancel=cancel)
    result = _result(sample, model, layers, n, cos, ratio, drafter_ids)
    result.update(info)
    return result


def check_ids(ids, vocab: int | None, what: str, model: str) -> None:
    """Token ids the model's embedding has: another tokenizer's ids are one line, not the
    embedding's IndexError."""
    import torch

    ids = torch.as_tensor(ids)
    if vocab is None or ids.numel() == 0:
        return
    low, top = int(ids.min()), int(ids.max())
    if low < 0 or top >= vocab:
        bad = low if low < 0 else top
        raise IdentifyError(f"{what}: token id {bad} is outside the vocabulary of model {model} "
                            f"({vocab} tokens): the ids are from another tokenizer")


def _resplit(sample: Sample, width: int) -> Sample:
    """A bare capture whose width was split by guesswork is re-split with the model's width."""
    import torch

    guessed = bool(sample.assumptions) and "split into" in sample.source_keys.get("slots", "")
    total = sum(int(s.tensor.shape[1]) for s in sample.slots)
    if not guessed or total % width:
        return sample
    whole = torch.cat([s.tensor for s in sample.slots], dim=1) if len(sample.slots) > 1 else sample.slots[0].tensor
    k = total // width
    sample.slots = [Slot(whole[:, i * width:(i + 1) * width], f"aux{i}") for i in range(k)]
    sample.assumptions = [f"k = {k} slots of H = {width} (width {total}), H taken from the model"]
    return sample


# ------------------------------------------------------------------------------ the model run


_CACHE: dict[str, Any] = {}
_CACHE_LOCK = threading.Lock()


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise IdentifyError("--device cuda: no CUDA device here (torch.cuda.is_available() is False)")
    if device != "cpu" and not device.startswith("cuda"):
        raise IdentifyError(f"--device {device}: expected auto, cpu or cuda")
    return device


def config_dtype(model: str):
    import torch

    return getattr(torch, read_model_config(model).dtype)


def load_model(model: str, device: str):
    """(model, layers, final norm) in eval mode on `device`, in the config's dtype; cached (one)."""
    key = f"{os.path.realpath(model)}|{device}|{_weights_stamp(model)}"
    with _CACHE_LOCK:
        if _CACHE.get("key") == key:
            return _CACHE["value"]
        _CACHE.clear()  # at most one model resident
        value = _load_model(model, device)
        _CACHE.update(key=key, value=value)
        return value


def _weights_stamp(model: str) -> str:
    try:
        return ",".join(f"{e.name}:{e.stat().st_mtime_ns}" for e in sorted(os.scandir(model), key=lambda e: e.name))
    except OSError:
        return ""


def _load_model(model: str, device: str):
    import importlib.util

    if importlib.util.find_spec("transformers") is None:
        raise IdentifyError(f"transformers is not installed here: {INSTALL}")
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    _quiet(transformers)

    dtype = config_dtype(model)
    kw = {"dtype": dtype} if int(transformers.__version__.split(".")[0]) >= 5 else {"torch_dtype": dtype}
    try:
        lm = AutoModelForCausalLM.from_pretrained(model, **kw)
    except MemoryError:
        raise
    except Exception as err:  # noqa: BLE001 - transformers raises many kinds on a foreign folder
        # (weights that do not fit the config: RuntimeError; unknown architectures: ValueError ...)
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        if "mismatched_sizes" in first:  # its own text points at a report we keep off stderr
            first = "its weights have other shapes than its config.json says"
        elif "weights_only" in first or "Weights only" in first:  # never pass on torch's advice
            first = "its weights are a pickle that safe loading (weights_only) refuses; nothing was executed"
        raise IdentifyError(f"model {model}: transformers cannot load it ({first[:200]})") from None
    lm.eval().to(device)
    layers, norm = find_parts(lm, model)
    return lm, layers, norm, torch.device(device)


def _quiet(transformers) -> None:
    """No progress bars or advice on stderr: the CLI says one line, the agent's stderr is a log."""
    try:
        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
    except AttributeError:
        pass


def find_parts(lm, model: str = "model"):
    """(decoder layer list, final norm) of a causal LM: Llama/Qwen/Mistral style `model.layers` +
    `model.norm`, or GPT-2 style `transformer.h` + `transformer.ln_f`."""
    from torch import nn

    for base_name in ("model", "transformer", "language_model"):
        base = getattr(lm, base_name, None)
        if base is None:
            continue
        inner = getattr(base, "language_model", None)  # multimodal wrappers
        for cand in (base, inner):
            if cand is None:
                continue
            for layers_name, norm_name in (("layers", "norm"), ("h", "ln_f")):
                layers = getattr(cand, layers_name, None)
                norm = getattr(cand, norm_name, None)
                if isinstance(layers, nn.ModuleList) and len(layers) and isinstance(norm, nn.Module):
                    return layers, norm
    raise IdentifyError(
        f"model {model}: architecture {type(lm).__name__} not understood (no model.layers and "
        "model.norm, nor transformer.h and transformer.ln_f)"
    )


def _base(lm):
    """The decoder without its LM head (no [T, vocab] logits), when the model exposes it."""
    get = getattr(lm, "get_decoder", None)
    try:
        base = get() if get is not None else None
    except Exception:  # noqa: BLE001 - some wrappers raise instead of returning None
        base = None
    return base if base is not None else lm


def score_boundaries(model: str, ids, parts: list, layers: int, *, device: str = "auto",
                     cancel: threading.Event | None = None):
    """(cos [P, L+2], ratio [P, L+2], info): mean cosine and median norm ratio of each part against
    boundaries b = 0..L and, in the last column, the final norm's output."""
    import torch

    dev = resolve_device(device)
    lm, layer_list, norm, tdev = load_model(model, dev)
    if len(layer_list) != layers:
        raise IdentifyError(f"model {model}: config says {layers} layers, the model has {len(layer_list)}")
    n_cols = layers + 2
    P = len(parts)
    cos = torch.full((P, n_cols), float("nan"))
    ratio = torch.full((P, n_cols), float("nan"))
    with torch.no_grad():
        X = torch.stack([p.to(tdev, torch.float32) for p in parts])  # [P, T, H]
        xn = X.norm(dim=-1)  # [P, T]

    def reduce(col: int, h) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        h = h[0] if isinstance(h, (tuple, list)) else h
        h = h.reshape(-1, h.shape[-1])[: X.shape[1]]
        dots = torch.empty(P, h.shape[0], device=tdev)
        hn = torch.empty(h.shape[0], device=tdev)
        for r0 in range(0, h.shape[0], CHUNK_ROWS):
            hs = h[r0:r0 + CHUNK_ROWS].float()
            hn[r0:r0 + CHUNK_ROWS] = hs.norm(dim=-1)
            dots[:, r0:r0 + CHUNK_ROWS] = (X[:, r0:r0 + CHUNK_ROWS] * hs).sum(-1)
        c = dots / (xn * hn).clamp_min(1e-30)
        r = xn / hn.clamp_min(1e-30)
        cos[:, col] = c.mean(1).cpu()
        ratio[:, col] = r.median(1).values.cpu()

    def layer_in(_mod, args, kwargs):
        reduce(0, args[0] if args else kwargs["hidden_states"])

    handles = [layer_list[0].register_forward_pre_hook(layer_in, with_kwargs=True)]
    for i, layer in enumerate(layer_list):
        handles.append(layer.register_forward_hook(lambda _m, _a, out, b=i + 1: reduce(b, out)))
    handles.append(norm.register_forward_hook(lambda _m, _a, out: reduce(layers + 1, out)))
    try:
        with torch.inference_mode():
            input_ids = torch.as_tensor(ids, dtype=torch.long).reshape(1, -1).to(tdev)
            _base(lm)(input_ids=input_ids, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    info = {"device": str(tdev), "model_dtype": str(next(lm.parameters()).dtype).removeprefix("torch."),
            "tokens_run": int(X.shape[1])}
    return cos, ratio, info


# ------------------------------------------------------------------------------ verdicts


def _f(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def _slot_verdict(label: str, cos, ratio, layers: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Best column among b = 0..L and the post-norm output (HF hidden_states[L] is post-norm, so a
    slot taken there is one of the documented captures; it is reported as norm "post")."""
    post = layers + 1
    order = cos.argsort(descending=True).tolist()
    order = [c for c in order if math.isfinite(float(cos[c]))] or order
    best, second = order[0], order[1] if len(order) > 1 else None
    best_cos, best_ratio = _f(cos[best]), _f(ratio[best])
    name = (lambda col: "post" if col == post else col)
    row: dict[str, Any] = {
        "label": label, "boundary": None, "cosine": best_cos, "norm_ratio": best_ratio,
        "nearest": name(best),
        "second": {"boundary": name(second), "cosine": _f(cos[second])} if second is not None else None,
        "margin": (best_cos - _f(cos[second])) if second is not None and best_cos is not None else None,
        "status": "unmatched",
    }
    where = "the final norm's output" if best == post else f"b={best}"
    findings: list[dict[str, Any]] = []
    if best_cos is not None and best_cos >= MATCH_COS:
        if best == post:
            row["norm"] = "post"
        else:
            row["boundary"] = best
        if best_ratio is not None and abs(best_ratio - 1) > SCALE_TOL:
            row["status"] = "scaled"
            findings.append({"code": "slot_scaled", "severity": "warning", "slot": label,
                             "message": f"{label} is {where} (cosine {best_cos:.4f}) scaled by "
                                        f"{best_ratio:.3g}: same direction, another magnitude"})
        else:
            row["status"] = "match"
        if row["second"] and row["second"]["cosine"] is not None and row["second"]["cosine"] >= MATCH_COS:
            findings.append({"code": "slot_ambiguous", "severity": "info", "slot": label,
                             "message": f"{label}: {where} and {name(second)} both match (cosine {best_cos:.4f} "
                                        f"vs {row['second']['cosine']:.4f}); {where} is the closer"})
    elif best_cos is not None and best_cos >= UNRELATED_COS:
        row["status"] = "noisy"
        findings.append({"code": "slot_unmatched", "severity": "warning", "slot": label,
                         "message": f"{label} matches no boundary of this model (nearest {where}, "
                                    f"cosine {best_cos:.3f} < {MATCH_COS}): noised, quantised or "
                                    "from another checkpoint of the model"})
    else:
        shown = "-" if best_cos is None else f"{best_cos:.3f}"
        findings.append({"code": "slot_unmatched", "severity": "warning", "slot": label,
                         "message": f"{label} matches no boundary of this model (best cosine {shown} "
                                    f"at {where}): from another model or another prompt"})
    return row, findings


def _final_verdict(cos, ratio, layers: int, said: str | None):
    """pre (b = L) or post (the final norm's output), by cosine, then by norm ratio."""
    pre, post = layers, layers + 1
    cands = []
    for col, norm in ((post, "post"), (pre, "pre")):
        c, r = _f(cos[col]), _f(ratio[col])
        if c is not None and c >= MATCH_COS:
            cands.append((abs(math.log(r)) if r and r > 0 else float("inf"), norm, c, r))
    if cands:
        _, norm, c, r = min(cands)
        final = {"norm": norm, "cosine": c, "norm_ratio": r, "boundary": layers if norm == "pre" else None,
                 "status": "match"}
        findings = []
        if r is not None and abs(r - 1) > SCALE_TOL:
            final["status"] = "scaled"
            findings.append({"code": "final_scaled", "severity": "warning", "slot": "final",
                             "message": f"final is the {norm}-norm state scaled by {r:.3g}"})
        if said and said != norm:
            findings.append({"code": "final_norm", "severity": "warning", "slot": "final",
                             "message": f"final is {norm}-norm (cosine {c:.4f}) but the file's schema says {said}-norm"})
        return final, findings
    best = int(cos[: layers + 2].argmax())
    c = _f(cos[best])
    final = {"norm": None, "cosine": c, "norm_ratio": _f(ratio[best]),
             "boundary": best if best <= layers and c is not None and c >= MATCH_COS else None,
             "nearest": "post" if best == post else best, "status": "unmatched"}
    if final["boundary"] is not None:
        msg = (f"final matches neither the final norm's input nor its output but b={best} "
               f"(cosine {c:.4f}): an auxiliary layer stored as the final state")
    else:
        msg = (f"final matches neither b={layers} (pre-norm, cosine {_f(cos[pre]):.3f}) nor the "
               f"post-norm output (cosine {_f(cos[post]):.3f}): noised or from another model")
    return final, [{"code": "final_unmatched", "severity": "warning", "slot": "final", "message": msg}]


def _result(sample: Sample, model: str, layers: int, n: int, cos, ratio, drafter_ids) -> dict[str, Any]:
    slots, findings = [], []
    for i, s in enumerate(sample.slots):
        row, f = _slot_verdict(s.label, cos[i], ratio[i], layers)
        row["said"] = s.boundary
        if s.boundary is not None and row["boundary"] is not None and s.boundary != row["boundary"]:
            f.append({"code": "boundary_label", "severity": "warning", "slot": s.label,
                      "message": f"{s.label}: the file says b={s.boundary}, the states are b={row['boundary']}"})
        slots.append(row)
        findings += f
    final = None
    if sample.final is not None:
        final, f = _final_verdict(cos[len(sample.slots)], ratio[len(sample.slots)], layers, sample.final_norm)
        findings += f
    # the post-norm output takes index L + 1 where conventions are matched (HF hidden_states[L])
    identified = [layers + 1 if r.get("norm") == "post" else r["boundary"] for r in slots]
    conventions, conv_findings = convention_finding(identified, layers, drafter_ids, sample.schema)
    findings = conv_findings + findings
    sort_findings(findings)
    return {
        "path": sample.path, "model": model, "layers": layers, "schema": sample.schema,
        "tokens": n, "hidden": sample.hidden, "slots": slots, "final": final,
        "conventions": conventions, "findings": findings, "assumptions": list(sample.assumptions),
        "matrix": [[_f(v) for v in row] for row in cos.tolist()],
    }


# ------------------------------------------------------------------------------ for other views
#
# summary --model, compare --model and the TUI show identified boundaries next to the file's
# own: a short record per slot ({"boundary", "cosine", "status"}, "norm": "post" for a slot that
# is the final norm's output), computed on the sample already loaded for the summary/comparison.


def brief(result: dict[str, Any]) -> dict[str, Any]:
    """The part of an identify result the other views show: per-slot boundaries, the final
    state's, the layer-id convention the slots follow. An unusable input stays {"error"}."""
    if "error" in result:
        return {"model": result.get("model"), "error": result["error"]}

    def short(row: dict[str, Any]) -> dict[str, Any]:
        out = {"boundary": row.get("boundary"), "cosine": row.get("cosine"), "status": row.get("status")}
        if row.get("norm"):
            out["norm"] = row["norm"]
        if out["boundary"] is None and row.get("nearest") is not None and not row.get("norm"):
            out["nearest"] = row["nearest"]  # matched nothing: the closest column, not a boundary
        return out

    conv = next((f for f in result.get("findings", []) if f.get("code") == "layer_convention"), None)
    return {
        "model": result.get("model"), "layers": result.get("layers"), "tokens": result.get("tokens"),
        "slots": [short(s) for s in result["slots"]],
        "final": short(result["final"]) if result.get("final") else None,
        "convention": {k: conv.get(k) for k in ("follows", "ids", "ids_from", "message")} if conv else None,
    }


def attach(summary: dict[str, Any], identified: dict[str, Any]) -> dict[str, Any]:
    """A summary with each slot's (and the final state's) "identified" record, and the run's
    facts under summary["identify"]; an identification that failed leaves the summary as it
    was, with summary["identify"] = {"model", "error"}."""
    summary["identify"] = {k: v for k, v in identified.items() if k not in ("slots", "final")}
    if "error" in identified or "error" in summary:
        return summary
    slots = summary.get("slots") or []
    if len(slots) != len(identified["slots"]):
        summary["identify"] = {"model": identified.get("model"),
                               "error": f"the model splits this capture into {len(identified['slots'])} "
                                        f"slots, the summary has {len(slots)}: give --slots/--hidden"}
        return summary
    for part, ident in zip(slots, identified["slots"]):
        part["identified"] = ident
    if summary.get("final") is not None and identified.get("final"):
        summary["final"]["identified"] = identified["final"]
    return summary


def summarize_identified(path: str, model: str, *, k: int = 5, slots: int | None = None,
                         hidden: int | None = None, device: str = "auto",
                         cancel: threading.Event | None = None) -> dict[str, Any]:
    """The summary JSON object of `path` with the slots identified against `model`, from one
    load of the file. A file that cannot be summarised gives the summary's error; a model that
    cannot identify it gives the summary with summary["identify"]["error"]."""
    from eagle3_tui.samples.load import load_sample
    from eagle3_tui.samples.stats import summarize

    try:
        sample = load_sample(path, slots=slots, hidden=hidden)
    except Cancelled:
        raise
    except Exception as err:  # noqa: BLE001 - as summarize_file: one line
        return error_result(path, err)
    config, problem = None, None
    try:
        config = model_config(model)
        if slots is None and hidden is None:  # a bare capture is split by the model's width
            sample = _resplit(sample, text_config(config)["hidden_size"])
    except (IdentifyError, ConfigError) as err:
        problem = str(err)
    try:
        summary = summarize(sample, k=k, cancel=cancel)
    except Cancelled:
        raise
    except Exception as err:  # noqa: BLE001
        return error_result(path, err)
    if problem is not None:
        return attach(summary, {"model": model, "error": problem})
    return attach(summary, brief(_identify_or_error(sample, model, config, device=device, cancel=cancel)))


def _identify_or_error(sample: Sample, model: str, config, *, ids=None, device: str = "auto",
                       cancel: threading.Event | None = None) -> dict[str, Any]:
    try:
        return identify(sample, model, config=config, ids=ids, device=device, cancel=cancel)
    except (IdentifyError, ConfigError) as err:
        return error_result(sample.path, str(err), model=model)
    except MemoryError as err:
        return error_result(sample.path, err, model=model)


def identify_pair(a: Sample, b: Sample, model: str, *, device: str = "auto",
                  cancel: threading.Event | None = None) -> dict[str, Any]:
    """{"a": brief, "b": brief} for the two sides of a comparison (one model load for both). A
    capture without token ids is run on A's ids (the comparison aligns the two by them); the
    pair's convention explanation, when the two sides read the same ids differently, is in
    "explained" (conventions.explain_pair)."""
    from eagle3_tui.samples.conventions import explain_pair

    try:
        config = model_config(model)
    except (IdentifyError, ConfigError) as err:
        return {"model": model, "error": str(err)}
    out: dict[str, Any] = {"model": model}
    for key, sample in (("a", a), ("b", b)):
        ids = None
        if sample.ids is None and key == "b" and a.ids is not None:
            ids = a.ids[: a.valid_len]
            out["b_ids_from"] = "a"
        out[key] = brief(_identify_or_error(sample, model, config, ids=ids, device=device, cancel=cancel))
    if "error" not in out["a"] and "error" not in out["b"]:
        layers = out["a"]["layers"]
        out["explained"] = explain_pair(bounds_of(out["a"]), bounds_of(out["b"]), layers, None)
    return out


def bounds_of(br: dict[str, Any]) -> list[int | None]:
    """Per-slot boundaries of a brief, the final norm's output as L + 1 (conventions.py's way)."""
    if "error" in br:
        return []
    post = (br.get("layers") or 0) + 1
    return [post if s.get("norm") == "post" else s.get("boundary") for s in br["slots"]]
