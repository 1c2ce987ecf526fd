"""The demo's README.txt: what every file is, and a table of the captures that tests parse (every
claim in it is checked against `compare_files`). The model paragraph is the demo's own
(`demo.model_lines()`): the seeded transformer's here, the real model's in demo/real_demo.py.

Its commands name the demo's folder as it was given to `eagle3-tui demo` (`at`), so they run as
written from the folder the user stood in (from anywhere, when it was an absolute path); the
table's paths are inside the demo's folder, as tests parse them."""

from __future__ import annotations

import os
import shlex

from eagle3_tui.demo.layout import (
    BATCH,
    CONVENTION_DIR,
    CONVENTION_IDS,
    CONVENTION_INDEX,
    DRAFTER_DIR,
    GZIPPED,
    MISSING,
    MODEL_DIR,
    README_MARK,
    SHARD,
)


def at(demo, rel: str = "") -> str:
    """`rel` inside the demo, as a command typed where `eagle3-tui demo` ran names it."""
    return shlex.quote(os.path.normpath(os.path.join(demo.dir, rel)))


def where_lines(demo) -> list[str]:
    """Where README.txt's commands run from."""
    if os.path.isabs(demo.dir):
        return ["The commands below name this folder by its absolute path: they run from anywhere.",
                "Paths in the table at the end are inside this folder."]
    return [f"The commands below run from the folder that holds {at(demo)} (where `eagle3-tui demo` ran);",
            "paths in the table at the end are inside this folder."]


def tiny_model_lines(demo) -> list[str]:
    """The seeded demo transformer: its shape, and the lines on train/ and model/."""
    cfg = demo.cfg
    return [
        f"Hidden states of a small decoder-only transformer (L={cfg.layers} layers, H={cfg.hidden},",
        f"vocab {cfg.vocab}), auxiliary slots at boundaries b = {demo.aux} (b = 0 embeddings, b = i+1",
        "output of layer i), so every slot is [T, H] and aux_hidden_state is [1, T, 3H].",
        "The prompts are chats (system, user, assistant) in a ChatML template; loss_mask is 1 on the",
        "assistant's answer and its <|im_end|>.",
        "",
        f"train/{SHARD}/data_{{i}}.ckpt   SpecForge offline schema, float32: input_ids, loss_mask,",
        *train_lines(),
        f"{MODEL_DIR}/  the target model every hidden state above comes from, a Llama that transformers loads",
        "    (config.json, model.safetensors, float32; run in float32 for train/). Like real models, its",
        "    layer 1 writes a massive activation (hundreds, in one channel) on <|im_start|> and a few other",
        "    tokens. Its LM head is fitted to the chats, so its own next tokens mostly follow the text",
        "    (accept --model takes them as targets). It names the layer of every slot (needs",
        "    `pip install eagle3-tui[model]`):",
        f"    eagle3-tui identify {at(demo, demo.train_files[0])} --model {at(demo, MODEL_DIR)}",
        f"{MODEL_DIR}/tokenizer.json  the byte-level BPE the chats are tokenized with ({len(demo.tokenizer)} "
        "tokens, <|pad|> = 0);",
        "    the TUI on a sample with its tokens as text:",
        f"    eagle3-tui {at(demo, demo.train_files[0])} --tokenizer {at(demo, MODEL_DIR)}",
    ]


def train_lines() -> list[str]:
    """train/'s layout after its first line (which says the dtype)."""
    return [
        "    hidden_state [1,T,H] after the final norm, aux_hidden_state [1,T,3H] before any norm.",
        f"    Batches of {BATCH} are right-padded (id 0, loss_mask 0, non-zero hidden rows on the pad).",
        f"    Indices {', '.join(map(str, MISSING))} are missing; "
        f"data_{GZIPPED} is stored as data_{GZIPPED}.ckpt.gz.",
        f"train_pt/{SHARD}/data_{{i}}.pt  the same samples under .pt names.",
        f"{CONVENTION_DIR}/{SHARD}/data_{CONVENTION_INDEX}.ckpt  a sample of another run, written with "
        f"SpecForge layer ids {list(CONVENTION_IDS)}",
        f"    (boundaries {[b + 1 for b in CONVENTION_IDS]}).",
    ]


def write_readme(demo) -> None:
    lines = [f"{README_MARK} (seed {demo.seed})", "", *where_lines(demo), "", *demo.model_lines()]
    if demo.drafter:
        lines += drafter_lines(demo)
    lines += [
        "vocab_mapping/vocab_mapping.pt  d2t/t2d draft vocabulary mapping: not a hidden-state sample.",
        f"    The {demo.draft[0]} most frequent loss-masked tokens; they cover {100 * demo.draft[1]:.1f}% of "
        "the loss-masked tokens of train/.",
        "",
        "infer/  inference captures (bf16 engine) of some of the same prompts. Try:",
        f"    eagle3-tui compare {at(demo, demo.train_files[0])} {at(demo, 'infer/ok_bf16_s0.pt')}",
        "",
        "capture | training sample | expected finding | format | what it is",
    ]
    for c in demo.captures:
        lines.append(f"{c.file} | {c.train} | {c.expect or 'none'} | {c.format} | {c.note}")
    lines.append("")
    with open(os.path.join(demo.dir, "README.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def drafter_lines(demo) -> list[str]:
    """The drafter, and which targets each acceptance figure is scored against."""
    sample, drafter, model = at(demo, demo.train_files[0]), at(demo, DRAFTER_DIR), at(demo, MODEL_DIR)
    return [
        f"{DRAFTER_DIR}/  an EAGLE-3 drafter (SpecForge's layout) trained on train/ over 3 draft steps: acceptance.",
        "    Against the data's next token ids (the text itself):",
        f"    eagle3-tui accept {sample} --drafter {drafter}",
        "    Against the target model's own next token (its LM head on the sample's final state), as the",
        "    TUI scores it when opened with --model, as `eagle3-tui demo` opens it (the two figures differ",
        "    where the model's own choice is not the text's):",
        f"    eagle3-tui accept {sample} --drafter {drafter} --model {model}",
    ]
