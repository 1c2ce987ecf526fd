"""What a written demo holds, as write_demo (and write_real_demo) return it and the demo's stamp
keeps it (demo/folder.py): the files by role, each capture with the finding it must give, the
model's shape. Tests and the `demo` command read the demo through this, never by listing folders."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TypedDict

from eagle3_tui.demo.layout import MODEL_DIR, SHARD


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


def manifest(demo, drafter_dir: str | None) -> DemoManifest:
    """What write_demo returns, for a written demo (demo/dataset.py's _Demo or its real subclass)."""
    directory = demo.dir
    total = 0
    for root, _dirs, files in os.walk(directory):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files if not f.startswith("."))
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


def listed_files(m: DemoManifest) -> list[str]:
    """Every file the manifest names, relative to the demo's folder."""
    files = [*m["train"], *m["train_pt"], *m["train_other"], *(c["file"] for c in m["infer"]), *m["other"]]
    if m.get("drafter"):
        files += [f"{m['drafter']}/config.json", f"{m['drafter']}/model.safetensors"]
    return files
