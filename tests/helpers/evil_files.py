"""Files that run a shell command when unpickled unsafely: every way a pickle can reach the loader.

The payload touches a marker file; a test that sees the marker knows code from the file ran.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import shlex
import struct
from pathlib import Path

import torch

REFUSED = "refused: the file asks to run Python code (posix.system)"


class RunsShell:
    """Unpickled unsafely, this runs `touch <marker>` through os.system."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, ("touch " + shlex.quote(self.marker),))


def _payload(marker: Path) -> dict:
    # a plausible sample around the payload, so only the payload can make loading fail
    return {"input_ids": torch.arange(8), "aux_hidden_state": torch.randn(8, 12), "x": RunsShell(marker)}


def write_evil_files(folder: Path, marker: Path) -> dict[str, str]:
    """{file name: the words its refusal must contain}. Covers the zip (mmap) path, the legacy
    non-zip torch format, a raw pickle, each inside gzip, a non-UTF-8 name (read through a file
    object, not mmap), and a protocol-0 pickle that does not even look like torch."""
    folder.mkdir(parents=True, exist_ok=True)
    zip_path = folder / "zip.pt"
    torch.save(_payload(marker), zip_path)
    legacy = folder / "legacy.pt"
    torch.save(_payload(marker), legacy, _use_new_zipfile_serialization=False)
    raw = folder / "raw.pt"
    raw.write_bytes(pickle.dumps({"x": RunsShell(marker)}, protocol=2))  # a bare pickle, no torch header
    for name in ("zip", "legacy", "raw"):
        (folder / f"{name}.ckpt.gz").write_bytes(gzip.compress((folder / f"{name}.pt").read_bytes()))
    latin1 = os.fsdecode(b"latin1-\xe9.pt")
    (folder / latin1).write_bytes(legacy.read_bytes())
    (folder / "protocol0.pt").write_bytes(pickle.dumps(RunsShell(marker), protocol=0))
    return {
        "zip.pt": REFUSED,
        "legacy.pt": REFUSED,
        "raw.pt": REFUSED,
        "zip.ckpt.gz": REFUSED,
        "legacy.ckpt.gz": REFUSED,
        "raw.ckpt.gz": REFUSED,
        latin1: REFUSED,
        "protocol0.pt": "not a torch, safetensors or gzip file (starts with text",
    }


def write_safetensors_with_pickle_metadata(path: Path, marker: Path) -> str:
    """A valid speculators-style safetensors sample whose __metadata__ holds a pickle stream as
    text. Safetensors metadata is str -> str JSON: it cannot be unpickled, only read as text."""
    text = pickle.dumps(RunsShell(marker), protocol=0).decode("latin-1")
    states = torch.randn(6, 4, 8).numpy().tobytes()
    ids = torch.arange(6).numpy().tobytes()
    header = {
        "__metadata__": {"payload": text},
        "hidden_states": {"dtype": "F32", "shape": [6, 4, 8], "data_offsets": [0, len(states)]},
        "token_ids": {"dtype": "I64", "shape": [6], "data_offsets": [len(states), len(states) + len(ids)]},
    }
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + states + ids)
    return text
