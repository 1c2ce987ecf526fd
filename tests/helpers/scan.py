"""Datasets of demo-transformer states to scan: `clean` and `planted` (every finding code once)
(a pytest plugin: the scan tests and the dataset view use them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from tests.helpers.scan_build import build, rewrite


@pytest.fixture(scope="session")
def clean(tmp_path_factory, untouched) -> Path:
    """Three shards of 12 files, all written the same way: nothing to warn about."""
    root = tmp_path_factory.mktemp("clean")
    build(root, seed=1)
    untouched(root)
    return root


@pytest.fixture(scope="session")
def planted(tmp_path_factory, untouched) -> Path:
    """Every finding code at least once (see PLANTED)."""
    root = tmp_path_factory.mktemp("planted")
    files = build(root, shifted_shard=1, seed=2, skip=(5,))
    d2 = torch.load(files[2], weights_only=True)
    aux = d2["aux_hidden_state"].clone()
    aux[0, 0, 70] = float("nan")  # row 0 is always among the rows a quick scan reads
    aux[0, 1, 3] = float("inf")
    rewrite(files[2], aux_hidden_state=aux)
    d26 = torch.load(files[26], weights_only=True)
    rewrite(files[26], loss_mask=torch.zeros_like(d26["loss_mask"]))
    d27 = torch.load(files[27], weights_only=True)
    ids, mask = d27["input_ids"].clone(), d27["loss_mask"].clone()
    keep = int((ids != 0).sum()) + 1  # drop the batch padding, then end in three id-0 rows with loss
    ids, mask = ids[:keep].clone(), mask[:keep].clone()
    ids[-3:] = 0
    mask[-3:] = 1
    rewrite(files[27], input_ids=ids, loss_mask=mask, aux_hidden_state=d27["aux_hidden_state"][:, :keep].clone(),
            hidden_state=d27["hidden_state"][:, :keep].clone())
    d33 = torch.load(files[33], weights_only=True)
    rewrite(files[33], aux_hidden_state=d33["aux_hidden_state"].to(torch.bfloat16),
            hidden_state=d33["hidden_state"].to(torch.bfloat16))
    shutil.copyfile(files[28], files[28].parent / "data_36.ckpt")  # a duplicate
    data = files[30].read_bytes()
    files[30].write_bytes(data[: len(data) // 2])  # truncated
    (root / "vocab_mapping").mkdir()
    torch.save({"d2t": torch.arange(8), "t2d": torch.ones(16, dtype=torch.bool)}, root / "vocab_mapping" / "vocab_mapping.pt")
    (root / "README.txt").write_text("made by tests/helpers/scan.py\n")
    untouched(root)
    return root


#: code -> the relative paths (or index range) the finding must name in `planted`
PLANTED = {
    "missing_index": [5],
    "unreadable": ["rows_24-36/data_30.ckpt"],
    "nonfinite": ["rows_0-12/data_2.ckpt"],
    "layout_mismatch": ["rows_24-36/data_33.ckpt"],
    "layer_group": [12, 23],
    "empty_loss_mask": ["rows_24-36/data_26.ckpt"],
    "loss_on_padding": ["rows_24-36/data_27.ckpt"],
    "duplicate": [["rows_24-36/data_28.ckpt", "rows_24-36/data_36.ckpt"]],
    "padding_states": None,
}
