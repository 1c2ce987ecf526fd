"""Write a small, realistic demo dataset: SpecForge training shards and inference captures.

The prompts are real chats (demo/chats.py) in a ChatML template, tokenized by a byte-level
BPE trained on them (demo/bpe.py, pure Python) and saved as model/tokenizer.json, so the ids
decode to text with `tokenizers`; the loss mask covers the assistant's answer. All hidden states
come from the seeded TinyDecoder (demo/model.py). Training samples are float32 runs
(right-padded in batches of four, as SpecForge does); inference captures are bf16 runs of some of
the same prompts, some correctly wired and one per known fault (FORMATS.md, end), in several
inference formats. README.txt in the output says which file is which, in a table that tests
parse: every claim in it is checked against `compare_files`.

torch and stdlib only (as engines/, which runs on the remote box too).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import torch

from eagle3_tui.demo import bpe, faults
from eagle3_tui.demo.chats import CHATS, SPECIAL, SYSTEMS, chat_text, corpus
from eagle3_tui.demo.hf_folder import write_model_folder, write_safetensors  # noqa: F401 - re-exported
from eagle3_tui.demo.layout import (  # noqa: F401 - re-exported: tests and the commands name them here
    BATCH,
    CONVENTION_DIR,
    CONVENTION_IDS,
    CONVENTION_INDEX,
    DRAFTER_DIR,
    GZIPPED,
    MISSING,
    MODEL_DIR,
    N_TRAIN,
    README_MARK,
    SHARD,
)
from eagle3_tui.demo.model import TinyDecoderConfig, build_model, fit_lm_head
from eagle3_tui.demo.prompt import Prompt  # noqa: F401 - re-exported: tests build prompts from here
from eagle3_tui.demo.readme import tiny_model_lines, write_readme
from eagle3_tui.demo.train_drafter import TrainSeq, save_drafter, train_drafter
from eagle3_tui.engines.read.load import load_sample

if TYPE_CHECKING:
    from typing import Unpack

# Synthetic prompts of random ids in a toy template, for test data that needs no text
# (tests import these); the demo itself is made of tokenized chats.
PAD, BOS, EOS = 0, 1, 2
SYSTEM = [3, 10, 11, 12, 4]  # <|system|> ... <|end|>
USER = [5]
ASSISTANT = [6, 13, 7]  # <|assistant|> header; the response follows
FIRST_WORD = 20  # ordinary tokens are drawn from [FIRST_WORD, vocab)


class CaptureFacts(TypedDict, total=False):
    """What a faulty capture's finding must say (tests/compare/test_demo_claims.py checks it)."""

    prompt_len: int  # the prompt the capture stops at
    factor: float  # scale_mismatch: B = factor x A
    position: int  # token_divergence: where the ids part
    offset: int  # token_shift: B row t is A row t + offset
    nan: int  # nonfinite: the counts and the first row
    inf: int
    first: int
    shift: str  # slot_mismatch: "shallower" | "deeper"
    shift_slots: int


class DemoCaptureJson(CaptureFacts, total=False):
    """One capture of write_demo's manifest ("infer")."""

    file: str
    train: str
    format: str
    expect: str | None
    note: str


class DemoModelInfo(TypedDict):
    layers: int
    hidden: int
    vocab: int
    aux_boundaries: list[int]


class DemoManifest(TypedDict):
    """What write_demo (and write_real_demo) return: what was written where."""

    dir: str
    seed: int
    model: DemoModelInfo
    train: list[str]  # relative paths
    train_pt: list[str]
    train_other: list[str]
    tokenizer: str
    drafter: str | None  # the drafter's folder (relative), None without one
    infer: list[DemoCaptureJson]
    target_model: str
    other: list[str]
    bytes: int  # the total size written


@dataclass
class DemoCapture:
    file: str  # relative to DIR
    train: str  # the training file it was captured from (relative to DIR)
    format: str
    expect: str | None  # the finding code compare must report (None: correctly wired)
    note: str
    extra: CaptureFacts = field(default_factory=lambda: CaptureFacts())


def _make_prompt(rng: random.Random, vocab: int) -> Prompt:
    """A random-id prompt in the toy template (test data; the demo uses _chat_prompts)."""
    user = [rng.randrange(FIRST_WORD, vocab) for _ in range(rng.randint(14, 110))]
    head = [BOS, *SYSTEM, *USER, *user, *ASSISTANT]
    resp = [rng.randrange(FIRST_WORD, vocab) for _ in range(rng.randint(18, 80))]
    return Prompt(head + resp + [EOS], len(head))


class DemoTokenizer(Protocol):
    """What the demo asks of its tokenizer: the BPE trained here (bpe.py), or the real model's
    (real_demo.py TokenizerAdapter)."""

    def encode(self, text: str) -> list[int]: ...

    def save(self, path: str) -> None: ...


def _chat_prompts(tok: DemoTokenizer, rng: random.Random, n: int) -> list[Prompt]:
    """n prompts of distinct chats, each under one of the system prompts, tokenized as prompt then
    answer (the answer never starts with a space, so this splits where tokenizing the whole chat does)."""
    out = []
    for c in rng.sample(range(len(CHATS)), n):
        head, tail = chat_text(rng.choice(SYSTEMS), *CHATS[c])
        head_ids = tok.encode(head)
        out.append(Prompt(head_ids + tok.encode(tail), len(head_ids)))
    return out


def _ids(ids: list[int]) -> torch.Tensor:
    return torch.tensor(ids, dtype=torch.int64)


def _save(obj: Any, path: str, *, gz: bool = False) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if gz:
        buf = io.BytesIO()
        torch.save(obj, buf)
        # mtime=0: the same seed gives the same bytes
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(buf.getvalue())
    else:
        torch.save(obj, path)


class _Demo:
    def __init__(self, directory: str, seed: int, drafter: bool = False):
        self.dir = directory
        self.seed = seed
        self.drafter = drafter  # README.txt lists the drafter when the demo trains one
        self.cfg = TinyDecoderConfig(seed=seed)
        self.model = build_model(self.cfg)
        self.rng = random.Random(seed)
        self.tokenizer: DemoTokenizer = bpe.train(corpus(), self.cfg.vocab, SPECIAL)
        self.aux = list(self.cfg.aux_boundaries)
        self.prompts: dict[int, Prompt] = {}
        self.train_files: dict[int, str] = {}
        self.padded: dict[int, list[int]] = {}  # ids as stored, with the batch's right padding
        self.captures: list[DemoCapture] = []
        self.other_train: list[str] = []  # training files outside train/ (another run's layer ids)
        self.train_dtype = torch.float32  # the training run's dtype (captures are bf16 runs)

    # --- helpers -------------------------------------------------------------------------
    def run(self, ids: list[int], dtype=torch.bfloat16):
        """(boundary states [L+1] each [T, H], post-norm final [T, H]) for one sequence."""
        return self.model.boundaries(torch.tensor(ids, dtype=torch.int64), dtype)

    def aux_cat(self, states, boundaries) -> torch.Tensor:
        return torch.cat([states[b] for b in boundaries], dim=-1)

    def infer(self, name: str, idx: int, obj: Any, *, fmt: str, expect: str | None, note: str,
              **extra: Unpack[CaptureFacts]) -> None:
        """Write capture `name` of training sample `idx` and record what it is."""
        path = os.path.join(self.dir, "infer", name)
        if name.endswith(".safetensors"):
            # speculators (vLLM convention): layer id i captures the input of layer i, so b = i
            write_safetensors(obj, path, {"format": "pt", "layer_ids": json.dumps(self.aux)})
        else:
            _save(obj, path)
        self.captures.append(DemoCapture(f"infer/{name}", self.train_files[idx], fmt, expect, note, extra))

    # --- training side ---------------------------------------------------------------------
    def write_model(self) -> None:
        """The target model every state comes from, as a Hugging Face Llama folder (--model), and
        the tokenizer (--tokenizer)."""
        folder = os.path.join(self.dir, MODEL_DIR)
        write_model_folder(self.model, folder)
        self.tokenizer.save(os.path.join(folder, "tokenizer.json"))

    def write_train(self) -> None:
        indices = [i for i in range(N_TRAIN) if i not in MISSING]
        head_data: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.prompts = self.make_prompts()
        for start in range(0, len(indices), BATCH):
            batch = indices[start : start + BATCH]
            width = max(len(self.prompts[i].ids) for i in batch)
            ids = torch.zeros(len(batch), width, dtype=torch.int64)  # pad id 0 on the right
            mask = torch.zeros(len(batch), width, dtype=torch.int64)
            for row, i in enumerate(batch):
                p = self.prompts[i]
                ids[row, : len(p.ids)] = torch.tensor(p.ids)
                mask[row, : len(p.ids)] = torch.tensor(p.loss_mask)
            # the whole padded batch goes through the model: pad rows get real, non-zero states
            states, final = self.model.boundaries(ids, self.train_dtype)
            aux = self.aux_cat(states, self.aux)
            for row, i in enumerate(batch):
                n = len(self.prompts[i].ids)
                head_data.append((final[row, : n - 1], ids[row, 1:n]))
                record = {
                    "input_ids": ids[row].clone(),
                    "loss_mask": mask[row].clone(),
                    "hidden_state": final[row : row + 1].clone(),
                    "aux_hidden_state": aux[row : row + 1].clone(),
                }
                ext = ".ckpt.gz" if i == GZIPPED else ".ckpt"
                rel = f"train/{SHARD}/data_{i}{ext}"
                _save(record, os.path.join(self.dir, rel), gz=(i == GZIPPED))
                _save(record, os.path.join(self.dir, f"train_pt/{SHARD}/data_{i}.pt"))
                self.train_files[i] = rel
                self.padded[i] = ids[row].tolist()
        self.fit_head(head_data)

    def make_prompts(self) -> dict[int, Prompt]:
        """N_TRAIN chats by global index (missing ones too: indices keep their prompts)."""
        return dict(enumerate(_chat_prompts(self.tokenizer, self.rng, N_TRAIN)))

    def fit_head(self, head_data: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        """The target model "was trained on" these chats: its LM head predicts their next tokens."""
        fit_lm_head(self.model, torch.cat([f for f, _ in head_data]), torch.cat([t for _, t in head_data]))

    def write_other_convention(self) -> None:
        """One sample of a run written with SpecForge layer ids CONVENTION_IDS (boundary = id + 1)."""
        i = CONVENTION_INDEX
        p = self.prompts[i]
        states, final = self.model.boundaries(_ids(p.ids), self.train_dtype)
        record = {"input_ids": _ids(p.ids), "loss_mask": _ids(p.loss_mask), "hidden_state": final[None].clone(),
                  "aux_hidden_state": self.aux_cat(states, [b + 1 for b in CONVENTION_IDS])[None]}
        rel = f"{CONVENTION_DIR}/{SHARD}/data_{i}.ckpt"
        _save(record, os.path.join(self.dir, rel))
        self.other_train.append(rel)

    def write_vocab_mapping(self) -> None:
        """SpecForge's d2t/t2d: the draft vocabulary is the most frequent loss-masked target tokens."""
        draft_vocab = 256
        counts = torch.zeros(self.cfg.vocab, dtype=torch.int64)
        for i in self.train_files:
            p = self.prompts[i]
            counts += torch.bincount(_ids(p.ids[p.response_start:]), minlength=self.cfg.vocab)
        keep = torch.sort(torch.argsort(counts, descending=True, stable=True)[:draft_vocab]).values
        t2d = torch.zeros(self.cfg.vocab, dtype=torch.bool)
        t2d[keep] = True
        d2t = keep - torch.arange(draft_vocab)  # SpecForge stores offsets: target = draft + d2t
        self.draft = (draft_vocab, int(counts[keep].sum()) / int(counts.sum()))
        _save({"d2t": d2t, "t2d": t2d}, os.path.join(self.dir, "vocab_mapping", "vocab_mapping.pt"))

    # --- inference side --------------------------------------------------------------------
    def write_infer(self) -> None:
        self.write_correct()
        self.write_faults()

    def write_correct(self) -> None:
        aux, L = self.aux, self.cfg.layers
        p = self.prompts[0]
        st, fin = self.run(p.ids)
        self.infer("ok_bf16_s0.pt", 0, {"input_ids": _ids(p.ids), "aux_hidden_state": self.aux_cat(st, aux)[None],
                                        "hidden_state": fin[None]},
                   fmt="dict: input_ids, aux_hidden_state [1,T,kH], hidden_state [1,T,H]", expect=None,
                   note="correctly wired; bf16 engine vs float32 training")

        p = self.prompts[1]
        seq = p.prompt_ids + self.decode(p.prompt_ids, 4)
        st, _ = self.run(seq)
        self.infer("ok_prefix_s1.pt", 1, {"input_ids": _ids(seq), "aux_hidden_state": self.aux_cat(st, aux)},
                   fmt="dict: input_ids, aux_hidden_state [T,kH]", expect=None,
                   note=f"correctly wired prefix: the prompt ({len(p.prompt_ids)} tokens) plus 4 greedily "
                        "decoded tokens", prompt_len=len(p.prompt_ids))

        st, _ = self.run(self.prompts[2].ids)
        self.infer("ok_noids_s2.pt", 2, self.aux_cat(st, aux), fmt="bare tensor [T,kH], no token ids", expect=None,
                   note="correctly wired, without token ids: aligned by the hidden states")

        st, _ = self.run(self.prompts[4].prompt_ids)
        self.infer("ok_list_s4.pt", 4, [st[b].clone() for b in aux], fmt="list of k tensors [T,H], no token ids",
                   expect=None, note="correctly wired prompt-only capture, as a list of tensors")

        p = self.prompts[5]
        st, _ = self.run(p.ids)
        hs = torch.stack([st[b] for b in aux] + [st[L]], dim=1)  # [T, k+1, H]: last = final before the norm
        self.infer("hs_5.safetensors", 5, {"token_ids": _ids(p.ids), "hidden_states": hs},
                   fmt="speculators safetensors: token_ids, hidden_states [T,k+1,H]", expect=None,
                   note="correctly wired speculators capture; its final state is before the norm by design "
                        "(info only)")

    def write_faults(self) -> None:
        """One capture per fault listed at the end of FORMATS.md (demo/faults.py)."""
        faults.write_layer_faults(self)
        faults.write_state_faults(self)
        faults.write_token_faults(self)
        self.write_convention_capture()
        faults.write_padding_fault(self)

    def write_convention_capture(self) -> None:
        """Issue 9's case: against the run with layer ids [0, 2, 3] (boundaries 1, 3, 4), a capture
        of boundaries 0, 2, 3: every slot one boundary shallower, the last one exactly on A's
        middle slot; a layer shift, not a permutation."""
        i = CONVENTION_INDEX
        p = self.prompts[i]
        train = [b + 1 for b in CONVENTION_IDS]
        got = list(CONVENTION_IDS)
        st, _ = self.run(p.ids)
        path = os.path.join(self.dir, "infer", f"fault_layer_ids_s{i}.pt")
        _save({"input_ids": _ids(p.ids), "aux_hidden_state": self.aux_cat(st, got)[None]}, path)
        self.captures.append(DemoCapture(
            f"infer/{os.path.basename(path)}", self.other_train[0], "dict: input_ids, aux_hidden_state [1,T,kH]",
            "slot_mismatch",
            f"layer ids {list(CONVENTION_IDS)} read under the other convention: boundaries {got} instead of "
            f"{train}, every slot one shallower (B2 holds A1's states)", {"shift": "shallower", "shift_slots": -1}))

    def padded_index(self) -> int:
        """A training sample not used by another capture with the most right padding."""
        used = {0, 1, 2, 4, 5, CONVENTION_INDEX} | set(range(8, 19))
        free = [i for i in self.train_files if i not in used]
        return max(free, key=lambda i: (len(self.padded[i]) - len(self.prompts[i].ids), -i))

    def decode(self, ids: list[int], steps: int) -> list[int]:
        """Greedy decoding with the model's LM head (bf16, like the engine)."""
        out = list(ids)
        head = self.model.head()
        for _ in range(steps):
            _, fin = self.run(out)
            out.append(int((fin[-1].float() @ head.T).argmax()))
        return out[len(ids):]

    # --- readme ---------------------------------------------------------------------------
    def model_lines(self) -> list[str]:
        """README.txt's lines on the model, the data's shapes and the model folder (demo/readme.py)."""
        return tiny_model_lines(self)

    def write_readme(self) -> None:
        write_readme(self)


#: Adam steps of the demo drafter: ~4 s on one core; training samples reach 65-75% step-1
#: top-1 (chance is well under 1%), a capture one layer off falls to 7-35%
DRAFTER_STEPS = 400


def _write_drafter(demo: _Demo, steps: int = DRAFTER_STEPS, head=None) -> str:
    """A one-layer EAGLE-3 drafter (SpecForge's layout) trained on the demo's training samples,
    for the TUI's --drafter and `eagle3-tui accept`. Its embeddings are the demo model's, so it
    needs no --model. Returns the drafter folder relative to the demo."""
    seqs = []
    for i in sorted(demo.train_files):
        s = load_sample(os.path.join(demo.dir, demo.train_files[i]))
        v = s.valid_len
        seqs.append(TrainSeq(s.ids[:v], s.loss_mask[:v], torch.cat([x.tensor[:v] for x in s.slots], dim=-1)))
    weights = train_drafter(seqs, embed=demo.model.embed.weight.detach(), head=head, steps=steps,
                            draft_vocab=256, seed=demo.seed)
    # SpecForge's layer ids read as "output of layer id": b = id + 1
    save_drafter(os.path.join(demo.dir, DRAFTER_DIR), weights, aux_layer_ids=[b - 1 for b in demo.aux])
    return DRAFTER_DIR


def _remove_stale_captures(directory: str, written: set[str]) -> None:
    """An earlier demo with another seed may have named a capture differently: drop it, so that
    infer/ holds exactly what README.txt lists."""
    infer = os.path.join(directory, "infer")
    for name in os.listdir(infer):
        if name not in written and name.startswith(("ok_", "fault_", "hs_")):
            os.remove(os.path.join(infer, name))


def _is_demo_readme(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(len(README_MARK)) == README_MARK
    except OSError:
        return False


def _check_target(directory: str) -> None:
    if not os.path.exists(directory):
        return
    if not os.path.isdir(directory):
        raise FileExistsError(f"{directory}: exists and is not a folder")
    names = os.listdir(directory)
    readme = os.path.join(directory, "README.txt")
    if names and not _is_demo_readme(readme):
        raise FileExistsError(f"{directory}: not empty and not a demo dataset; choose another folder")


def write_demo(directory: str, seed: int = 0, *, drafter: bool = False) -> DemoManifest:
    """Write the demo dataset into `directory` (new, empty, or an earlier demo) and return a manifest
    (with `drafter`, also a trained drafter in DIR/drafter: a few seconds more):
    {"dir", "seed", "train": [rel paths], "train_pt": [...], "infer": [{"file", "train", "format",
    "expect", "note", ...}], "other": [...], "bytes": total size}."""
    _check_target(directory)
    os.makedirs(directory, exist_ok=True)
    # one thread: these tensors are tiny, and a second thread only adds contention (4x slower
    # on a busy 2-core box); it also keeps the bytes independent of the machine's core count
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        demo = _Demo(directory, seed, drafter)
        write_parts(demo)
        drafter_dir = _write_drafter(demo) if drafter else None
    finally:
        torch.set_num_threads(threads)
    return manifest(demo, drafter_dir)


def write_parts(demo: _Demo, say=lambda _s: None) -> None:
    """Every part of the demo but the drafter, in order (`say` hears each step)."""
    directory = demo.dir
    say("training samples (train/, train_pt/)")
    demo.write_train()
    say("the target model (model/)")
    demo.write_model()
    demo.write_other_convention()
    demo.write_vocab_mapping()
    say("inference captures, correct and faulty (infer/)")
    demo.write_infer()
    demo.write_readme()
    _remove_stale_captures(directory, {os.path.basename(c.file) for c in demo.captures})


def manifest(demo: _Demo, drafter_dir: str | None) -> DemoManifest:
    """What write_demo returns (see there), for a written demo."""
    directory = demo.dir
    total = 0
    for root, _dirs, files in os.walk(directory):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return {
        "dir": directory,
        "seed": demo.seed,
        "model": {"layers": demo.cfg.layers, "hidden": demo.cfg.hidden, "vocab": demo.cfg.vocab,
                  "aux_boundaries": demo.aux},
        "train": [demo.train_files[i] for i in sorted(demo.train_files)],
        "train_pt": [f"train_pt/{SHARD}/data_{i}.pt" for i in sorted(demo.train_files)],
        "train_other": list(demo.other_train),
        "tokenizer": f"{MODEL_DIR}/tokenizer.json",
        "drafter": drafter_dir,
        "infer": [{"file": c.file, "train": c.train, "format": c.format, "expect": c.expect, "note": c.note,
                   **c.extra}
                  for c in demo.captures],
        "target_model": MODEL_DIR,
        "other": ["vocab_mapping/vocab_mapping.pt", f"{MODEL_DIR}/tokenizer.json", f"{MODEL_DIR}/config.json",
                  f"{MODEL_DIR}/model.safetensors", "README.txt"],
        "bytes": total,
    }
