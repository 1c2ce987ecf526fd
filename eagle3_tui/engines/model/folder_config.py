"""The one checked reader of config values from a model, drafter or tokenizer folder.

Every value the package takes from a folder's config.json (or a tokenizer.json's ids) comes
through here, checked for type, range and, where the folder's weights say it too, agreement
with them. A bad value is a FolderConfigError whose message is one line naming the folder, the
key and what is wrong: never a traceback, a hang or memory that grows with a number in a file.

    model = read_model_config("/models/llama")   # ModelConfig: layers, hidden, vocab, dtype, tied
    cfg = drafter_values(folder, raw)             # DrafterValues: heads, eps, rope_theta, ...

The model's layer count is bounded by the layers its safetensors hold (their headers only: a
few KB read per shard); its hidden and vocabulary sizes must fit its embedding there. A model
kept as pytorch_model.bin cannot be looked into without unpickling: its sizes are bounded by
MAX_LAYERS and MAX_SIZE.

Standard library only: shipped to the remote box with the rest of samples/.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eagle3_tui.engines.read.json_file import JsonFileError, NoJsonFile, open_regular, parse_json, read_json_file
from eagle3_tui.engines.read.sample import SampleError

#: more decoder layers than any model has; the bound when the weights cannot be counted
MAX_LAYERS = 1024
#: a hidden size, vocabulary or head count past this is no real model's (2**22 = 4M)
MAX_SIZE = 1 << 22
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt")
EMBED_NAMES = ("model.embed_tokens.weight", "model.language_model.embed_tokens.weight", "embed_tokens.weight",
               "transformer.wte.weight", "language_model.model.embed_tokens.weight")
#: a decoder layer's weights: `<prefix>layers.<i>.` or GPT-2's `transformer.h.<i>.`
_LAYER = re.compile(r"^(?P<prefix>(?:[\w]+\.)*?)(?:layers|h)\.(?P<i>\d+)\.")
_OTHER_TOWERS = ("vision", "visual", "audio", "mtp", "speech")
HEADER_LIMIT = 100 * 1024 * 1024


class ConfigError(Exception):
    """A drafter's config.json that names no layer ids (conventions.drafter_layer_ids). One line
    for the user. A config value or file that cannot be used is a FolderConfigError."""


def read_json(path: str, what: str) -> dict[str, Any]:
    """A JSON object file of a folder (config.json, a shard index) through the one safe reader
    (engines/read/json_file.py: no FIFO or device opened, size and depth bounded)."""
    try:
        data = read_json_file(path)
    except NoJsonFile:
        raise FolderConfigError(f"{what}: no {os.path.basename(path)} in {os.path.dirname(path) or '.'}") from None
    except JsonFileError as err:
        raise FolderConfigError(f"{what}: {err}") from None
    if not isinstance(data, dict):
        raise FolderConfigError(f"{what}: {path} is not a JSON object")
    return data


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """The language model's part of a config (multimodal configs nest it in text_config)."""
    inner = config.get("text_config")
    if isinstance(inner, dict) and "num_hidden_layers" in inner:
        return inner
    return config


class FolderConfigError(SampleError):
    """A folder config value (or config file) that cannot be used. One line for the user.

    A SampleError: the engines that load a drafter or a model on the way to a sample's result
    (accept, scan --drafter, the scan's records) report it as they report a file they cannot use.
    Not a ConfigError: the few places that catch that (identify) name both."""


# --------------------------------------------------------------------------- typed values


#: characters of a value from a user's file that a message quotes (shown)
SHOWN = 40


def shown(v: Any, *, quote: bool = True, limit: int = SHOWN) -> str:
    """A value from a user's JSON (a config.json, a tokenizer.json, a weight name) as a message
    quotes it: as JSON writes it (a string in its double quotes; `quote=False`: a string as it is),
    cut to `limit` characters with "…". The one place every message embedding such a value goes
    through: a 4,000-digit number or a 10,000-character string stays a short, readable line."""
    if isinstance(v, str) and not quote:
        text = v
    elif isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 3 * (limit - 2):  # > `limit` characters
        # digits past the cut are never shown, so not made (int to str is quadratic, refused past 4,300)
        digits = int((v.bit_length() - 1) * 0.30102999566398) + 1  # |v| has this many digits or one more
        digits += abs(v) >= 10**digits
        return f"a{' negative' if v < 0 else ''} number of {digits:,} digits"
    else:
        try:
            text = json.dumps(v, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(v)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, str):
        return f"the string {shown(v)}"
    if isinstance(v, (list, dict)):
        return "a list" if isinstance(v, list) else "an object"
    return shown(v)


def whole(where: str, cfg: Mapping[str, object], key: str, *, default: int | None = None, low: int = 1,
          high: int = MAX_SIZE) -> int | None:
    """cfg[key] as a whole number in [low, high]; `default` when the key is absent or null."""
    v = cfg.get(key)
    if v is None:
        return default
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        v = int(v)
    if not isinstance(v, int) or isinstance(v, bool):
        raise FolderConfigError(f"{where}: config.json {key} is {_kind(v)}, not a whole number")
    if not low <= v <= high:
        raise FolderConfigError(f"{where}: config.json {key} = {shown(v)} is out of range ({low}..{high})")
    return v


def needed(where: str, cfg: Mapping[str, object], key: str, *, low: int = 1, high: int = MAX_SIZE) -> int:
    """cfg[key] as a whole number in [low, high] (whole); a key absent or null is an error."""
    v = whole(where, cfg, key, low=low, high=high)
    if v is None:
        raise FolderConfigError(f"{where}: config.json has no {key}")
    return v


def number(where: str, cfg: Mapping[str, object], key: str, *, default: float, high: float = 1e12) -> float:
    """cfg[key] as a finite number in (0, high]; `default` when absent or null."""
    v = cfg.get(key)
    if v is None:
        return default
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise FolderConfigError(f"{where}: config.json {key} is {_kind(v)}, not a number")
    # an int is compared as it is: math.isfinite of a 400-digit one raises OverflowError
    if (isinstance(v, float) and not math.isfinite(v)) or not 0 < v <= high:
        raise FolderConfigError(f"{where}: config.json {key} = {shown(v)} is out of range (a number > 0, at most {high:g})")
    return float(v)


def flag(where: str, cfg: Mapping[str, object], key: str, *, default: bool) -> bool:
    v = cfg.get(key)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise FolderConfigError(f"{where}: config.json {key} is {_kind(v)}, not true or false")
    return v


def mapping(where: str, cfg: Mapping[str, object], key: str) -> dict[str, Any] | None:
    v = cfg.get(key)
    if v is None:
        return None
    if not isinstance(v, dict):
        raise FolderConfigError(f"{where}: config.json {key} is {_kind(v)}, not an object")
    return v


# --------------------------------------------------------------------------- weight headers


def safetensors_header(file: str) -> dict[str, Any]:
    """The JSON header of a safetensors file (names -> {"dtype", "shape", ...}); no data read."""
    try:
        with open_regular(file) as fh:
            raw = fh.read(8)
            if len(raw) < 8:
                raise FolderConfigError(f"{file}: truncated safetensors file (no header)")
            (n,) = struct.unpack("<Q", raw)
            if n > HEADER_LIMIT:
                raise FolderConfigError(f"{file}: corrupt safetensors header (length {n})")
            text = fh.read(n)
    except JsonFileError as err:
        raise FolderConfigError(str(err)) from None
    except OSError as err:
        raise FolderConfigError(f"{file}: {err.strerror or err}") from None
    try:
        header = parse_json(text, file)
    except JsonFileError:
        raise FolderConfigError(f"{file}: corrupt safetensors header") from None
    if not isinstance(header, dict):
        raise FolderConfigError(f"{file}: corrupt safetensors header")
    return header


def weight_shapes(folder: str) -> dict[str, list[int]] | None:
    """name -> shape of every tensor in the folder's safetensors (an index's shards or the
    *.safetensors files), from their headers; None when the weights are not safetensors."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.isfile(index):
        try:
            files = sorted({str(f) for f in read_json(index, f"model {folder}")["weight_map"].values()})
        except (KeyError, TypeError, AttributeError, FolderConfigError):
            raise FolderConfigError(f"{index}: unreadable shard index (no weight_map of names to files)") from None
    else:
        files = sorted(n for n in os.listdir(folder) if n.endswith(".safetensors"))
    if not files:
        return None
    shapes: dict[str, list[int]] = {}
    for name in files:
        if os.path.basename(name) != name:
            raise FolderConfigError(f"{index}: the shard index names a file outside the folder ({shown(name, quote=False)})")
        for key, info in safetensors_header(os.path.join(folder, name)).items():
            if isinstance(info, dict) and isinstance(info.get("shape"), list):
                shapes[key] = info["shape"]
    return shapes


def layers_in(shapes: dict[str, list[int]]) -> int | None:
    """Decoder layers the weights hold (the language model's: other towers' layers are not
    counted); None when no name looks like a layer's."""
    found: dict[str, int] = {}
    for name in shapes:
        m = _LAYER.match(name)
        if m and not any(t in m["prefix"] for t in _OTHER_TOWERS):
            found[m["prefix"]] = max(found.get(m["prefix"], 0), int(m["i"]) + 1)
    return max(found.values()) if found else None


# --------------------------------------------------------------------------- model folders


@dataclass
class ModelConfig:
    folder: str
    raw: dict[str, Any]  # the whole config.json
    layers: int
    hidden: int
    vocab: int | None
    dtype: str  # a torch floating dtype's name ("float32" when the config names none)
    tied: bool  # tie_word_embeddings


_DTYPES = ("float32", "float16", "bfloat16", "float64")


def read_model_config(folder: str) -> ModelConfig:
    """config.json of a Hugging Face decoder folder, every value the package uses checked."""
    where = f"model {folder}"
    if not os.path.isdir(folder):
        raise FolderConfigError(f"{where}: {'no such folder' if not os.path.exists(folder) else 'not a folder'}")
    if not os.path.lexists(os.path.join(folder, "config.json")):  # a FIFO there: read_json says so
        raise FolderConfigError(f"{where}: not a Hugging Face model folder (no config.json)")
    raw = read_json(os.path.join(folder, "config.json"), where)
    inner = text_config(raw)
    if inner.get("num_hidden_layers") is None or inner.get("hidden_size") is None:
        raise FolderConfigError(f"{where}: config.json has no num_hidden_layers/hidden_size: not a decoder model folder")
    layers = needed(where, inner, "num_hidden_layers", high=MAX_LAYERS)
    hidden = needed(where, inner, "hidden_size")
    vocab = whole(where, inner, "vocab_size")
    for key in ("intermediate_size", "num_attention_heads", "num_key_value_heads", "head_dim"):
        whole(where, inner, key)
    whole(where, inner, "max_position_embeddings", high=1 << 31)
    for key in ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon"):
        number(where, inner, key, default=1e-6, high=1.0)
    number(where, inner, "rope_theta", default=10000.0)
    tied = flag(where, raw, "tie_word_embeddings", default=False)
    dtype = _dtype(where, raw, inner)
    if not any(name.endswith(WEIGHT_SUFFIXES) for name in os.listdir(folder)):
        raise FolderConfigError(f"{where}: config.json but no weights (*.safetensors) in the folder")
    _fits_weights(where, folder, layers, hidden, vocab)
    return ModelConfig(folder, raw, layers, hidden, vocab, dtype, tied)


def _dtype(where: str, raw: dict[str, Any], inner: dict[str, Any]) -> str:
    for cfg, key in ((raw, "torch_dtype"), (raw, "dtype"), (inner, "torch_dtype")):
        v = cfg.get(key)
        if v is None or v == "auto":
            continue
        name = v.removeprefix("torch.") if isinstance(v, str) else None
        if name not in _DTYPES:
            raise FolderConfigError(f"{where}: config.json {key} is {_kind(v)}, not one of {', '.join(_DTYPES)}")
        return name
    return "float32"


def _fits_weights(where: str, folder: str, layers: int, hidden: int, vocab: int | None) -> None:
    shapes = weight_shapes(folder)
    if shapes is None:
        return  # pytorch_model.bin: bounded by MAX_LAYERS / MAX_SIZE above
    present = layers_in(shapes)
    # fewer layers than the weights hold loads without a word (transformers drops the rest) and
    # every boundary it names is then another model's: as wrong as more layers than there are
    if present is not None and layers != present:
        raise FolderConfigError(f"{where}: the model folder is inconsistent: config.json num_hidden_layers = "
                                f"{layers} but the weights hold {present} layers")
    embed = next((shapes[n] for n in EMBED_NAMES if n in shapes), None)
    if embed is not None and len(embed) == 2:
        if embed[1] != hidden:
            raise FolderConfigError(f"{where}: config.json hidden_size = {hidden} but the embedding is {embed[1]} wide")
        if vocab is not None and embed[0] != vocab:
            raise FolderConfigError(f"{where}: config.json vocab_size = {vocab} but the embedding has {embed[0]} rows")


def model_tied(folder: str) -> bool:
    """tie_word_embeddings of a model folder (False without a readable config: the head is
    then looked for by name)."""
    try:
        raw = read_json(os.path.join(folder, "config.json"), f"model {folder}")
    except FolderConfigError:
        return False
    return flag(f"model {folder}", raw, "tie_word_embeddings", default=False)


# --------------------------------------------------------------------------- drafter folders


@dataclass
class DrafterValues:
    target_hidden: int | None
    heads: int
    head_dim: int | None
    vocab: int | None
    draft_vocab: int | None
    eps: float
    rope_theta: float
    rope_scaling: dict | None
    norm_output: bool


def drafter_values(folder: str, cfg: dict[str, Any]) -> DrafterValues:
    """The values load_drafter uses, from the drafter's merged config (transformer_layer_config
    over the top level), each checked; agreement with the weights is checked by the loader."""
    where = f"{folder}"
    heads = whole(where, cfg, "num_attention_heads")
    if heads is None:
        raise FolderConfigError(f"{where}: config.json lacks num_attention_heads")
    params = mapping(where, cfg, "rope_parameters")
    scaling: dict[str, Any] | None
    if params is not None and "rope_theta" in params:
        theta, scaling = number(where, params, "rope_theta", default=10000.0), params
    else:
        theta, scaling = number(where, cfg, "rope_theta", default=10000.0), mapping(where, cfg, "rope_scaling")
    return DrafterValues(
        target_hidden=whole(where, cfg, "target_hidden_size"), heads=heads,
        head_dim=whole(where, cfg, "head_dim"), vocab=whole(where, cfg, "vocab_size"),
        draft_vocab=whole(where, cfg, "draft_vocab_size"),
        eps=number(where, cfg, "rms_norm_eps", default=1e-6, high=1.0), rope_theta=theta,
        rope_scaling=scaling, norm_output=flag(where, cfg, "norm_output", default=True),
    )


def layer_ids(where: str, name: str, value: Any) -> list[int]:
    """A drafter's aux layer ids (conventions.ID_KEYS names where): a non-empty list of whole
    numbers from 0 to MAX_LAYERS - 1."""
    if value == []:
        raise FolderConfigError(f"{where}: config.json {name} is an empty list: no layer ids")
    if not isinstance(value, list):
        raise FolderConfigError(f"{where}: config.json {name} is {_kind(value)}, not a list of layer ids")
    for i in value:
        if not isinstance(i, int) or isinstance(i, bool):
            raise FolderConfigError(f"{where}: config.json {name} holds {_kind(i)}, not a layer id")
        if not 0 <= i < MAX_LAYERS:
            raise FolderConfigError(f"{where}: config.json {name} holds {shown(i)}: out of range (0..{MAX_LAYERS - 1})")
    return list(value)


# --------------------------------------------------------------------------- tokenizer folders


def tokenizer_vocab(file: str, tok: Any) -> dict[int, str]:
    """id -> token text of a parsed tokenizer.json (BPE/WordPiece dict or Unigram list, then
    the added tokens), every id checked to be a whole number in [0, MAX_SIZE)."""
    if not isinstance(tok, dict):
        raise FolderConfigError(f"{file}: not a tokenizer.json (not a JSON object)")
    model = tok.get("model")
    vocab = model.get("vocab") if isinstance(model, dict) else None
    out: dict[int, str] = {}
    if isinstance(vocab, dict):
        for text, i in vocab.items():
            out[_token_id(file, "model.vocab", i)] = str(text)
    elif isinstance(vocab, list):  # Unigram: [[piece, score], ...]
        out = {i: str(p[0]) for i, p in enumerate(vocab) if isinstance(p, list) and p}
    added = tok.get("added_tokens") or []
    if not isinstance(added, list):
        raise FolderConfigError(f"{file}: added_tokens is {_kind(added)}, not a list")
    for entry in added:
        if isinstance(entry, dict) and "id" in entry:
            out[_token_id(file, "added_tokens id", entry["id"])] = str(entry.get("content", ""))
    return out


def _token_id(file: str, what: str, v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise FolderConfigError(f"{file}: a {what} is {_kind(v)}, not a token id")
    if not 0 <= v < MAX_SIZE:
        raise FolderConfigError(f"{file}: a {what} = {shown(v)} is out of range (a token id from 0 to {MAX_SIZE - 1})")
    return v
