"""Small, seeded SpecForge-style files for the UI tests (real torch.save files, no mocks)."""

from __future__ import annotations

import os
from pathlib import Path

FIXED_MTIME = 1_767_225_600  # 2026-01-01 00:00 UTC


def write_specforge(path: Path, *, tokens: int = 48, hidden: int = 32, slots: int = 3,
                    pad: int = 0, seed: int = 0, nan_row: int | None = None) -> Path:
    import torch

    gen = torch.Generator().manual_seed(seed)
    t = tokens
    ids = torch.randint(1, 1000, (t,), generator=gen)
    mask = torch.zeros(t, dtype=torch.long)
    mask[t // 3 : t - pad] = 1  # prompt without loss, then the answer
    if pad:
        ids[t - pad :] = 0
    # residual norms grow with depth and vary along the sequence, like a real model's
    ramp = 1.0 + torch.sin(torch.arange(t, dtype=torch.float32) / 4).abs()[:, None]
    aux = torch.cat(
        [torch.randn(t, hidden, generator=gen) * ramp * (2.0 ** i) for i in range(slots)], dim=1
    )
    final = torch.randn(t, hidden, generator=gen)
    if nan_row is not None:
        aux[nan_row, 0] = float("nan")
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "input_ids": ids,
            "loss_mask": mask,
            "hidden_state": final[None].to(torch.bfloat16),
            "aux_hidden_state": aux[None].to(torch.bfloat16),
        },
        path,
    )
    return path


def make_tree(root: Path) -> Path:
    """A shard folder like SpecForge writes, plus the odd things users' trees contain."""
    import torch

    shard = root / "rows_0-2000"
    for i, idx in enumerate((0, 1, 2, 10, 11)):
        write_specforge(shard / f"data_{idx}.ckpt", seed=i, pad=6 if idx == 2 else 0)
    write_specforge(shard / "data_12.ckpt", seed=12, nan_row=5)
    (shard / "data_13.ckpt").write_bytes(b"this is not a torch file\n" * 4)
    (root / "rows_2000-4000").mkdir(parents=True)
    write_specforge(root / "rows_2000-4000" / "data_2000.ckpt", seed=20)
    (root / "rows_10000-12000").mkdir()
    vocab = root / "vocab_mapping"
    vocab.mkdir()
    torch.save({"d2t": torch.arange(64), "t2d": torch.ones(256, dtype=torch.bool)},
               vocab / "vocab_mapping.pt")
    (root / "README.txt").write_text("demo\n")
    os.symlink(root / "missing.ckpt", root / "dangling.ckpt")
    for path in root.rglob("*"):  # fixed times: the status line shows them in snapshots
        if not path.is_symlink():
            os.utime(path, (FIXED_MTIME, FIXED_MTIME))
    return root
