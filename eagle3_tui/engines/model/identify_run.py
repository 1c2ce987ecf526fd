"""The target model's forward for `identify`: load it once, hook it, reduce every state as it passes.

Each hook reduces its state at once to a few numbers per part (slot or final state) and lets the
activations go, so memory stays at one layer's activations and the model runs without its LM
head or KV cache. Three kinds of numbers come out of the one forward:

- the boundaries (b = 0 the input of layer 0, b = i + 1 the output of layer i, b = L the final
  norm's input) and the final norm's output: mean cosine (over every row but the state's massive
  activations, engines/read/massive.py) and median norm ratio over every row;
- the same boundaries shifted by -8..8 rows (row t of the part against row t - s of the state),
  for a capture that is a token late or early;
- what capture code takes by mistake inside each layer: the normalized input (what a fused
  add-norm kernel hands the attention), the residual after attention and before the MLP, the
  attention output, the MLP output and their sum (a layer's branches without the residual, as
  vLLM's and SGLang's decoder layers return `hidden_states` and `residual` apart).

The shifted and in-layer numbers are means over at most CATALOGUE_ROWS evenly spread rows: a
mean cosine needs no more to tell states apart, and the cost stays independent of T.

torch and the standard library at module level; transformers is imported inside functions (the
optional `model` extra). Shipped to the remote box with the rest of engines/.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from eagle3_tui.engines.model.folder_config import read_model_config
from eagle3_tui.engines.read import torch_gate
from eagle3_tui.engines.read.massive import MASSIVE_FACTOR
from eagle3_tui.engines.read.stats import Cancelled
from eagle3_tui.engines.results.identify import ForwardInfo

#: rows per chunk when a boundary is reduced against the parts (caps the float32 temporaries)
CHUNK_ROWS = 256
#: rows the shifted and in-layer states are scored on (evenly spread over the sample)
CATALOGUE_ROWS = 256
#: the largest token lag or lead looked for, in rows
MAX_SHIFT = 8
INSTALL = "pip install eagle3-tui[model]"

#: in-layer states, by the submodule that shows them: (kind, module names, "out" | "in")
#: "normalized": the layer's input after its first norm; "mid": the residual between attention
#: and MLP (the input of the norm before the MLP, in Llama/Qwen/Mistral and GPT-2 layers)
INNER_KINDS = ("normalized", "mid", "attn", "mlp", "branches")


class IdentifyError(Exception):
    """Unusable input (not a model folder, width that does not fit, no transformers). One line."""


@dataclass
class Scores:
    """What one forward measured, for P parts against a model of L layers.

    cos, ratio: [P, L + 2] mean cosine and median norm ratio against b = 0..L and, in the last
    column, the final norm's output. lag: [P, L + 2, 2 * MAX_SHIFT + 1] mean cosine of row t
    against the state's row t - s, s = -MAX_SHIFT..MAX_SHIFT (index s + MAX_SHIFT). inner: kind ->
    [P, L] mean cosine against that state of layer i (absent when the architecture hides it)."""

    cos: Any
    ratio: Any
    lag: Any
    inner: dict[str, Any] = field(default_factory=dict)
    info: ForwardInfo = field(default_factory=lambda: ForwardInfo())


# ------------------------------------------------------------------------------ the model


_CACHE: dict[str, Any] = {}
_CACHE_LOCK = threading.Lock()
#: one hooked forward at a time on the cached model (serve-check --live identifies in a thread
#: while the dataset's layers are identified in another: their hooks mixed 101 rows with 103)
_RUN_LOCK = threading.Lock()


def resolve_device(device: str) -> str:
    # lazy: torch: loaded when used, never at start-up
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise IdentifyError("--device cuda: no CUDA device here (torch.cuda.is_available() is False)")
    if device != "cpu" and not device.startswith("cuda"):
        raise IdentifyError(f"--device {device}: expected auto, cpu or cuda")
    return device


def config_dtype(model: str):
    """The torch dtype the model folder's config names (checked by engines/model/folder_config.py)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    return getattr(torch, read_model_config(model).dtype)


def load_model(model: str, device: str):
    """(model, layers, final norm, device) in eval mode, in the config's dtype; cached (one)."""
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
    if importlib.util.find_spec("transformers") is None:
        raise IdentifyError(f"transformers is not installed here: {INSTALL}")
    # lazy: torch and transformers: loaded when used, never at start-up
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    _quiet(transformers)

    dtype = config_dtype(model)
    kw = {"dtype": dtype} if int(transformers.__version__.split(".")[0]) >= 5 else {"torch_dtype": dtype}

    if not torch_gate.pickles_allowed():  # a pytorch_model.bin is a pickle: this torch must not load it
        kw["use_safetensors"] = True
    try:
        lm = AutoModelForCausalLM.from_pretrained(model, **kw)
    except MemoryError:
        raise
    except Exception as err:  # noqa: BLE001 - transformers raises many kinds on a foreign folder
        # (weights that do not fit the config: RuntimeError; unknown architectures: ValueError ...)
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        if kw.get("use_safetensors") and not any(n.endswith(".safetensors") for n in os.listdir(model)):
            # its weights are pickles only (pytorch_model.bin): the gate's own line says why
            raise IdentifyError(f"model {model}: {torch_gate.problem(torch_gate.torch_version())}") from None
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
    # lazy: torch: loaded when used, never at start-up
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


def inner_modules(layer) -> dict[str, tuple[Any, str]] | None:
    """kind -> (submodule, "in" | "out") where a decoder layer shows its in-layer states, or None
    for a layout not known (the in-layer part of the catalogue is then left out).

    Llama/Qwen/Mistral: input_layernorm -> self_attn -> (+) -> post_attention_layernorm -> mlp.
    Gemma-style sandwich norms (pre_feedforward_layernorm): the attention branch is the output of
    post_attention_layernorm and the residual between is the input of pre_feedforward_layernorm.
    GPT-2: ln_1 -> attn -> (+) -> ln_2 -> mlp."""
    def get(*names: str) -> Any:
        return next((getattr(layer, n) for n in names if getattr(layer, n, None) is not None), None)

    norm1, attn, mlp = get("input_layernorm", "ln_1"), get("self_attn", "attn"), get("mlp")
    if norm1 is None or attn is None or mlp is None:
        return None
    pre_ff = get("pre_feedforward_layernorm")
    if pre_ff is not None:
        post_attn, post_ff = get("post_attention_layernorm"), get("post_feedforward_layernorm")
        if post_attn is None or post_ff is None:
            return None
        return {"normalized": (norm1, "out"), "mid": (pre_ff, "in"), "attn": (post_attn, "out"),
                "mlp": (post_ff, "out")}
    norm2 = get("post_attention_layernorm", "ln_2")
    if norm2 is None:
        return None
    return {"normalized": (norm1, "out"), "mid": (norm2, "in"), "attn": (attn, "out"), "mlp": (mlp, "out")}


# ------------------------------------------------------------------------------ the forward


class _Reducer:
    """Holds the parts (unit rows, float32) and fills Scores as the hooks hand it states."""

    def __init__(self, parts: list, layers: int, tdev, cancel: threading.Event | None):
        # lazy: torch: loaded when used, never at start-up
        import torch

        self.torch, self.cancel, self.layers = torch, cancel, layers
        with torch.no_grad():
            X = torch.stack([p.to(tdev, torch.float32) for p in parts])  # [P, T, H]
        self.X, self.xn = X, X.norm(dim=-1)  # [P, T]
        P, T = X.shape[0], X.shape[1]
        self.T = T
        n = min(T, CATALOGUE_ROWS)
        self.rows = torch.linspace(0, T - 1, n, device=tdev).round().long().unique()
        Xr = X[:, self.rows]
        self.Xr = Xr / Xr.norm(dim=-1, keepdim=True).clamp_min(1e-30)  # [P, n, H]
        cols, shifts = layers + 2, 2 * MAX_SHIFT + 1
        nan = float("nan")
        self.scores = Scores(cos=torch.full((P, cols), nan), ratio=torch.full((P, cols), nan),
                             lag=torch.full((P, cols, shifts), nan))
        self._attn: dict[int, Any] = {}
        self._plan: tuple[int, Any] | None = None  # _shift_plan's, for the T it was made for
        self._pending: list[tuple[str, int, Any]] = []  # in-layer states not scored yet (flush)

    def _check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()

    def _rows_of(self, h):
        h = h[0] if isinstance(h, (tuple, list)) else h
        return h.reshape(-1, h.shape[-1])[: self.T]

    def boundary(self, col: int, h) -> None:
        """Every row against column `col` (cos, ratio), and the catalogue rows at every shift.
        A layer's output comes after its in-layer states: they are scored first."""
        self._check()
        self.flush()
        torch, X, xn = self.torch, self.X, self.xn
        h = self._rows_of(h)
        P, T = X.shape[0], h.shape[0]
        dots = torch.empty(P, T, device=X.device)
        hn = torch.empty(T, device=X.device)
        for r0 in range(0, T, CHUNK_ROWS):
            hs = h[r0:r0 + CHUNK_ROWS].float()
            hn[r0:r0 + CHUNK_ROWS] = hs.norm(dim=-1)
            dots[:, r0:r0 + CHUNK_ROWS] = (X[:, r0:r0 + CHUNK_ROWS] * hs).sum(-1)
        c = dots / (xn[:, :T] * hn).clamp_min(1e-30)
        r = xn[:, :T] / hn.clamp_min(1e-30)
        # a massive-activation row of the state (row 0 of a real model, 40..190x the median row)
        # does not vote: an fp8 cast clips it (cosine 0.31 there) while every other row matches
        keep = (hn <= MASSIVE_FACTOR * hn.median()).float()
        self.scores.cos[:, col] = ((c * keep).sum(1) / keep.sum().clamp_min(1)).cpu()
        self.scores.ratio[:, col] = r.median(1).values.cpu()
        self._shifts(col, h, hn)

    def _shifts(self, col: int, h, hn) -> None:
        """Mean cosine of the catalogue rows t against the state's rows t - s, every shift at once:
        one matrix product of the catalogue rows with every row some shift reaches, then one
        gather of the (row, shift) pairs and one masked mean (_shift_plan), instead of a search,
        a gather and a mean per shift (17 small parallel ops that each wait for both threads)."""
        torch = self.torch
        reach, at, keep, counts = self._shift_plan(h.shape[0])
        # only the rows some shift reaches (at most 17 x 256, whatever T): a float32 copy of
        # those, not of the whole state
        u = h[reach].float() / hn[reach].clamp_min(1e-30)[:, None]
        m = torch.einsum("pnh,th->pnt", self.Xr, u)  # [P, n, len(reach)]
        picked = m.gather(2, at.expand(m.shape[0], -1, -1))  # [P, n, shifts]
        mean = (picked * keep).sum(1) / counts.clamp_min(1)  # [P, shifts]
        self.scores.lag[:, col, :] = torch.where(counts > 0, mean, float("nan")).cpu()

    def _shift_plan(self, T: int):
        """For a state of T rows: the rows some shift reaches (sorted), and per (catalogue row t,
        shift s) the place of row t - s among them, whether it exists, and how many exist per
        shift. The same for every boundary of a forward: computed once."""
        if self._plan is not None and self._plan[0] == T:
            return self._plan[1]
        torch = self.torch
        shifts = torch.arange(-MAX_SHIFT, MAX_SHIFT + 1, device=self.rows.device)
        idx = self.rows[:, None] - shifts[None, :]  # [n, shifts]
        inside = (idx >= 0) & (idx < T)
        reach = idx[inside].unique()
        place = torch.zeros(T, dtype=torch.long, device=idx.device)
        place[reach] = torch.arange(reach.numel(), device=idx.device)
        plan = (reach, place[idx.clamp(0, T - 1)][None], inside.float(), inside.sum(0))
        self._plan = (T, plan)
        return plan

    def inner(self, kind: str, layer: int, h) -> None:
        """The catalogue rows of an in-layer state of `layer` (shift 0), scored with the layer's
        other in-layer states when the layer's output passes (flush)."""
        self._check()
        h = self._rows_of(h)
        if h.shape[0] < self.T:
            return
        hr = h[self.rows].float()
        if kind == "attn":
            self._attn[layer] = hr
        elif kind == "mlp" and layer in self._attn:
            self._pending.append(("branches", layer, self._attn.pop(layer) + hr))
        self._pending.append((kind, layer, hr))

    def flush(self) -> None:
        """Score the in-layer states held since the last flush in one batch: one norm, product
        and mean for the layer's five states instead of five of each (each a parallel op that
        waits for every thread)."""
        if not self._pending:
            return
        torch = self.torch
        pending, self._pending = self._pending, []
        U = torch.stack([hr for _, _, hr in pending])  # [K, n, H]
        U = U / U.norm(dim=-1, keepdim=True).clamp_min(1e-30)
        cos = torch.einsum("pnh,knh->pkn", self.Xr, U).mean(-1).cpu()  # [P, K], no [P, K, n, H] temporary
        for j, (kind, layer, _) in enumerate(pending):
            if kind not in self.scores.inner:
                self.scores.inner[kind] = torch.full((self.X.shape[0], self.layers), float("nan"))
            self.scores.inner[kind][:, layer] = cos[:, j]


def score_states(model: str, ids, parts: list, layers: int, *, device: str = "auto",
                 cancel: threading.Event | None = None) -> Scores:
    """Run the model once on `ids` and score every part against its boundaries, their shifts and
    the in-layer states (Scores). Raises IdentifyError on a model that does not fit."""
    dev = resolve_device(device)
    lm, layer_list, norm, tdev = load_model(model, dev)
    if len(layer_list) != layers:
        raise IdentifyError(f"model {model}: config says {layers} layers, the model has {len(layer_list)}")
    with _RUN_LOCK:  # the hooks go on the one cached model: a second run at once would feed them too
        return _scored(lm, layer_list, norm, tdev, ids, parts, layers, cancel)


def _scored(lm, layer_list, norm, tdev, ids, parts: list, layers: int, cancel: threading.Event | None) -> Scores:
    # lazy: torch: loaded when used, never at start-up
    import torch

    red = _Reducer(parts, layers, tdev, cancel)

    def layer_in(_mod, args, kwargs):
        red.boundary(0, args[0] if args else kwargs["hidden_states"])

    handles = [layer_list[0].register_forward_pre_hook(layer_in, with_kwargs=True)]
    for i, layer in enumerate(layer_list):
        handles.append(layer.register_forward_hook(lambda _m, _a, out, b=i + 1: red.boundary(b, out)))
        for kind, (module, side) in (inner_modules(layer) or {}).items():
            if side == "out":
                handles.append(module.register_forward_hook(lambda _m, _a, out, k=kind, i=i: red.inner(k, i, out)))
            else:
                handles.append(module.register_forward_pre_hook(
                    lambda _m, args, kwargs, k=kind, i=i: red.inner(k, i, args[0] if args else next(iter(kwargs.values()))),
                    with_kwargs=True))
    handles.append(norm.register_forward_hook(lambda _m, _a, out: red.boundary(layers + 1, out)))
    try:
        with torch.inference_mode():
            input_ids = torch.as_tensor(ids, dtype=torch.long).reshape(1, -1).to(tdev)
            _base(lm)(input_ids=input_ids, use_cache=False)
        red.flush()  # a model whose final norm hook did not run still scores its last layer
    finally:
        for h in handles:
            h.remove()
    red.scores.info = {"device": str(tdev), "model_dtype": str(next(lm.parameters()).dtype).removeprefix("torch."),
                       "tokens_run": int(red.T), "catalogue_rows": int(red.rows.numel())}
    return red.scores
