"""Which layer is this? Match every slot of a sample against every boundary of the target model.

The model (a Hugging Face folder next to the data) runs once on the sample's own token ids
(identify_run.py): b = 0 is the input of decoder layer 0 (what HF calls hidden_states[0], after
any embedding scale), b = i + 1 the output of layer i, b = L the output of the last layer (the
final norm's input), plus the final norm's output. Hooks reduce each state as it passes.

A slot is a boundary's state when 1 - mean cosine is within the noise its capture can have
(capture_faults.TOLERANCE: 1.6e-3; 2.7e-3 for an 8-bit float capture; measured in
tests/identify/test_capture_noise.py). A slot farther than that is not called a match, however
high its cosine (a residual from inside a layer sits at 0.99 from the layer's output): the
catalogue of capture faults (capture_faults.py) names what it holds instead (a token lag, a branch
without the residual, a normalized or mid-layer state), and only what nothing explains is called
unmatched. A match whose median norm ratio is off by more than 2% (10x the measured drift) is
called scaled. The runner-up and margin are always reported.

torch and the standard library at module level; transformers is imported inside functions (the
optional `model` extra), and this module is shipped to the remote box with the rest of engines/.
"""

from __future__ import annotations

import threading
from typing import Any, Literal, cast

from eagle3_tui.engines.model.capture_faults import TOLERANCE, TOLERANCE_FP8  # noqa: F401 - the match bounds
from eagle3_tui.engines.model.conventions import ConfigError, drafter_layer_ids, explain_pair, num_layers, text_config
from eagle3_tui.engines.model.folder_config import FolderConfigError, read_model_config
from eagle3_tui.engines.model.identify_run import (  # noqa: F401 - the model's door, re-exported for callers
    INSTALL,
    IdentifyError,
    Scores,
    config_dtype,
    find_parts,
    load_model,
    resolve_device,
    score_states,
)
from eagle3_tui.engines.model.identify_verdicts import SCALE_TOL, UNRELATED_COS, result  # noqa: F401
from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.sample import NotASample, Sample, SampleError, Slot
from eagle3_tui.engines.read.stats import Cancelled, summarize
from eagle3_tui.engines.results.errors import error_result
from eagle3_tui.engines.results.findings import Finding
from eagle3_tui.engines.results.identify import (
    IdentifiedBrief,
    IdentifiedPart,
    IdentifyBrief,
    IdentifyPair,
    IdentifyResult,
)
from eagle3_tui.engines.results.summary import Summary

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
) -> IdentifyResult:
    """The identify JSON object for one file; unusable input gives {"path", "model", "error"}."""
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
    except (IdentifyError, ConfigError, FolderConfigError) as err:
        return {"path": path, "model": model, **error_result(path, str(err))}
    except MemoryError as err:
        return {"path": path, "model": model, **error_result(path, err)}


def _load(load_sample, path: str, what: str, **kw) -> Sample:
    try:
        return load_sample(path, **kw)
    except NotASample as err:
        raise IdentifyError(f"{what}{path}: {err}") from None
    except SampleError as err:
        raise IdentifyError(f"{what}{path}: {err}") from None


def model_config(model: str) -> dict[str, Any]:
    """config.json of a model folder, every value checked (engines/model/folder_config.py): a decoder
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
) -> IdentifyResult:
    """Identify every slot (and the final state) of `sample` against the model in folder `model`.

    `ids` replaces the sample's own token ids (a capture without ids); `tokens` caps the rows.
    Raises IdentifyError on unusable input and Cancelled when `cancel` is set.
    """
    config = config or model_config(model)
    inner = text_config(config)
    layers, width = num_layers(config), inner["hidden_size"]
    if layers is None:  # model_config checked it; a config handed in may lack it
        raise IdentifyError(f"model {model}: config.json has no num_hidden_layers")
    if sample.hidden != width:
        sample = _resplit(sample, width)
    if sample.hidden != width:
        raise IdentifyError(
            f"{sample.path}: slots are {sample.hidden} wide but the model's hidden size is {width}: "
            "captured from another model"
        )
    borrowed = ids is not None
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
    scores = score_states(model, ids[:n], parts, layers, device=device, cancel=cancel)
    out = result(sample, model, layers, n, scores, drafter_ids, borrowed_ids=borrowed)
    out.update(scores.info)
    return out


def check_ids(ids, vocab: int | None, what: str, model: str) -> None:
    """Token ids the model's embedding has: another tokenizer's ids are one line, not the
    embedding's IndexError."""
    # lazy: torch: loaded when used, never at start-up
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
    # lazy: torch: loaded when used, never at start-up
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


# ------------------------------------------------------------------------------ for other views
#
# summary --model, compare --model and the TUI show identified boundaries next to the file's
# own: a short record per slot ({"boundary", "cosine", "status"}, "norm": "post" for a slot that
# is the final norm's output), computed on the sample already loaded for the summary/comparison.


def brief(result: IdentifyResult) -> IdentifyBrief:
    """The part of an identify result the other views show: per-slot boundaries, the final
    state's, the layer-id convention the slots follow. An unusable input stays {"error"}."""
    if "error" in result:
        return {"model": result.get("model"), "error": result["error"]}

    def short(row: IdentifiedPart) -> IdentifiedBrief:
        out: IdentifiedBrief = {"boundary": row.get("boundary"), "cosine": row.get("cosine"), "status": row.get("status")}
        if second := row.get("second"):  # the runner-up and by how much it lost: how sure the match is
            out["second"], out["margin"] = second, row.get("margin")
        if norm := row.get("norm"):
            out["norm"] = norm
        if out["boundary"] is None and (nearest := row.get("nearest")) is not None and not norm:
            out["nearest"] = nearest  # matched nothing: the closest column, not a boundary
        if fault := row.get("fault"):  # what the capture holds instead (capture_faults.py)
            out["fault"] = {}
            for k in _FAULT_SHOWN:
                if k in fault:
                    out["fault"][k] = fault[k]
        return out

    conv = next((f for f in result.get("findings", []) if f.get("code") == "layer_convention"), None)
    final = result.get("final")
    return {
        "model": result.get("model"), "layers": result.get("layers"), "tokens": result.get("tokens"),
        "slots": [short(s) for s in result["slots"]],
        "final": short(final) if final else None,
        "convention": {"follows": conv.get("follows"), "ids": conv.get("ids"), "ids_from": conv.get("ids_from"),
                       "message": conv.get("message")} if conv else None,
        # what the CLI prints under FINDINGS, but the per-slot verdicts the rows already say
        # each a Finding of its three first keys (severity first, as the JSON has always had them)
        "findings": [cast(Finding, {k: f.get(k) for k in ("severity", "code", "message")})
                     for f in result.get("findings", []) if f.get("severity") != "info"],
    }


#: what brief keeps of a fault, in this order
_FAULT_SHOWN: tuple[Literal["kind", "short", "cosine", "boundary", "layer", "shift"], ...] = (
    "kind", "short", "cosine", "boundary", "layer", "shift")


def attach(summary: Summary, identified: IdentifyBrief) -> Summary:
    """A summary with each slot's (and the final state's) "identified" record, and the run's
    facts under summary["identify"]; an identification that failed leaves the summary as it
    was, with summary["identify"] = {"model", "error"}."""
    summary["identify"] = {**identified}
    summary["identify"].pop("slots", None)
    summary["identify"].pop("final", None)
    if "error" in identified or "error" in summary:
        return summary
    slots = summary.get("slots") or []
    if len(slots) != len(identified["slots"]):
        summary["identify"] = {"model": identified.get("model"),
                               "error": f"the model splits this capture into {len(identified['slots'])} "
                                        f"slots, the summary has {len(slots)} (its split of the width is a guess)"}
        return summary
    for part, ident in zip(slots, identified["slots"]):
        part["identified"] = ident
    if (final := summary.get("final")) is not None and (ident_final := identified.get("final")):
        final["identified"] = ident_final
    return summary


def summarize_identified(path: str, model: str, *, k: int = 5, slots: int | None = None,
                         hidden: int | None = None, device: str = "auto",
                         cancel: threading.Event | None = None) -> Summary:
    """The summary JSON object of `path` with the slots identified against `model`, from one
    load of the file. A file that cannot be summarised gives the summary's error; a model that
    cannot identify it gives the summary with summary["identify"]["error"]."""
    try:
        sample = load_sample(path, slots=slots, hidden=hidden)
    except Cancelled:
        raise
    except Exception as err:  # noqa: BLE001 - as summarize_file: one line
        return {**error_result(path, err)}
    config, problem = None, None
    try:
        config = model_config(model)
        if slots is None and hidden is None:  # a bare capture is split by the model's width
            sample = _resplit(sample, text_config(config)["hidden_size"])
    except (IdentifyError, ConfigError, FolderConfigError) as err:
        problem = str(err)
    try:
        summary = summarize(sample, k=k, cancel=cancel)
    except Cancelled:
        raise
    except Exception as err:  # noqa: BLE001
        return {**error_result(path, err)}
    if problem is not None:
        return attach(summary, {"model": model, "error": problem})
    return attach(summary, brief(_identify_or_error(sample, model, config, device=device, cancel=cancel)))


def _identify_or_error(sample: Sample, model: str, config, *, ids=None, device: str = "auto",
                       cancel: threading.Event | None = None) -> IdentifyResult:
    try:
        return identify(sample, model, config=config, ids=ids, device=device, cancel=cancel)
    except (IdentifyError, ConfigError, FolderConfigError) as err:
        return {"path": sample.path, "model": model, **error_result(sample.path, str(err))}
    except MemoryError as err:
        return {"path": sample.path, "model": model, **error_result(sample.path, err)}


def identify_pair(a: Sample, b: Sample, model: str, *, device: str = "auto",
                  cancel: threading.Event | None = None) -> IdentifyPair:
    """{"a": brief, "b": brief} for the two sides of a comparison (one model load for both). A
    capture without token ids is run on A's ids (the comparison aligns the two by them); the
    pair's convention explanation, when the two sides read the same ids differently, is in
    "explained" (conventions.explain_pair)."""
    try:
        config = model_config(model)
    except (IdentifyError, ConfigError, FolderConfigError) as err:
        return {"model": model, "error": str(err)}
    out: IdentifyPair = {"model": model}
    out["a"] = brief(_identify_or_error(a, model, config, device=device, cancel=cancel))
    ids = None
    if b.ids is None and a.ids is not None:
        ids = a.ids[: a.valid_len]
        out["b_ids_from"] = "a"
    out["b"] = brief(_identify_or_error(b, model, config, ids=ids, device=device, cancel=cancel))
    layers = out["a"].get("layers")
    if "error" not in out["a"] and "error" not in out["b"] and layers is not None:
        out["explained"] = explain_pair(bounds_of(out["a"]), bounds_of(out["b"]), layers, None)
    return out


def bounds_of(br: IdentifyBrief) -> list[int | None]:
    """Per-slot boundaries of a brief, the final norm's output as L + 1 (conventions.py's way)."""
    if "error" in br:
        return []
    post = (br.get("layers") or 0) + 1
    return [post if s.get("norm") == "post" else s.get("boundary") for s in br["slots"]]
