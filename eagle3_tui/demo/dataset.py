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
from typing import TYPE_CHECKING, Any, Callable, Protocol

import torch

from eagle3_tui.demo import bpe, faults
from eagle3_tui.demo.chats import CHATS, SPECIAL, SYSTEMS, chat_text, corpus
from eagle3_tui.demo.drafter import write_drafter
from eagle3_tui.demo.folder import check_target, demo_options, remove_stale_captures, unstamp, write_stamp
from eagle3_tui.demo.hf_folder import write_model_folder, write_safetensors
from eagle3_tui.demo.layout import (
    BATCH,
    CONVENTION_DIR,
    CONVENTION_IDS,
    CONVENTION_INDEX,
    GZIPPED,
    MISSING,
    MODEL_DIR,
    N_TRAIN,
    SHARD,
)
from eagle3_tui.demo.manifest import CaptureFacts, DemoCapture, DemoManifest, manifest
from eagle3_tui.demo.model import TinyDecoderConfig, build_model, fit_lm_head
from eagle3_tui.demo.prompt import Prompt
from eagle3_tui.demo.readme import tiny_model_lines, write_readme

if TYPE_CHECKING:
    from typing import Unpack


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
        self.say: Callable[[str], None] = _quiet  # hears each step (write_parts sets it)

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
                self.say(f"writing training samples (train/, train_pt/) {len(self.train_files)}/{len(indices)}")
        self.fit_head(head_data)

    def make_prompts(self) -> dict[int, Prompt]:
        """N_TRAIN chats by global index (missing ones too: indices keep their prompts)."""
        return dict(enumerate(_chat_prompts(self.tokenizer, self.rng, N_TRAIN)))

    def fit_head(self, head_data: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        """The target model "was trained on" these chats: its LM head predicts their next tokens."""
        self.say("fitting the target model's LM head to the chats")
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


def _quiet(_text: str) -> None:
    pass


def write_demo(directory: str, seed: int = 0, *, drafter: bool = False,
               say: Callable[[str], None] = _quiet) -> DemoManifest:
    """Write the demo dataset into `directory` (new, empty, or an earlier demo) and return a manifest
    (with `drafter`, also a trained drafter in DIR/drafter: a few seconds more):
    {"dir", "seed", "train": [rel paths], "train_pt": [...], "infer": [{"file", "train", "format",
    "expect", "note", ...}], "other": [...], "bytes": total size}. `say` hears what it is doing,
    a line a step (a counter such as "12/24" at the end of a line that repeats). The demo's stamp,
    written last, lets `eagle3-tui demo` reopen it (demo/folder.py)."""
    check_target(directory)
    os.makedirs(directory, exist_ok=True)
    unstamp(directory)  # half-written, it is no demo to reopen
    # one thread: these tensors are tiny, and a second thread only adds contention (4x slower
    # on a busy 2-core box); it also keeps the bytes independent of the machine's core count
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        say("building the target model and training its tokenizer")
        demo = _Demo(directory, seed, drafter)
        write_parts(demo, say)
        drafter_dir = write_drafter(demo, say=say) if drafter else None
    finally:
        torch.set_num_threads(threads)
    written = manifest(demo, drafter_dir)
    write_stamp(directory, demo_options(seed, drafter, real=False), written)
    return written


def write_parts(demo: _Demo, say: Callable[[str], None] = _quiet) -> None:
    """Every part of the demo but the drafter, in order (`say` hears each step)."""
    directory = demo.dir
    demo.say = say
    demo.write_train()
    say("writing the target model (model/)")
    demo.write_model()
    demo.write_other_convention()
    demo.write_vocab_mapping()
    say("writing inference captures, correct and faulty (infer/)")
    demo.write_infer()
    demo.write_readme()
    remove_stale_captures(directory, {os.path.basename(c.file) for c in demo.captures})
