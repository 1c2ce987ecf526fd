"""Files made from the real model's states (tests/helpers/real_world.py): a SpecForge training
sample written the way SpecForge writes one (bf16, SDPA, a right-padded batch of two chats, pad id
0) and inference captures of the same chat (one bf16 request, eager attention), correct and faulty."""

from __future__ import annotations

import pytest
import torch

from tests.helpers.autouse import _no_ssh_agent, _one_torch_thread  # noqa: F401 - autouse fixtures


def _cat(states, boundaries):
    return torch.cat([states[b] for b in boundaries], dim=-1)


@pytest.fixture(scope="module")
def real_files(tmp_path_factory, real_target, real_chats):
    root = tmp_path_factory.mktemp("real-files")
    aux = list(real_target.cfg.aux_boundaries)
    long = [c for c in real_chats if len(c.ids) >= 60]
    mine, longer, other = long[0], max(long[1:8], key=lambda c: len(c.ids)), long[2]
    if len(longer.ids) <= len(mine.ids):
        mine, longer = min(long[:8], key=lambda c: len(c.ids)), max(long[:8], key=lambda c: len(c.ids))
    width = len(longer.ids)
    ids = torch.zeros(2, width, dtype=torch.int64)
    ids[0, : len(mine.ids)] = torch.tensor(mine.ids)
    ids[1] = torch.tensor(longer.ids)
    states, final = real_target.boundaries(ids, torch.bfloat16, attn="sdpa")
    mask = torch.zeros(width, dtype=torch.int64)
    mask[: len(mine.ids)] = torch.tensor(mine.loss_mask)
    train = root / "data_0.ckpt"
    torch.save({"input_ids": ids[0].clone(), "loss_mask": mask, "hidden_state": final[0:1].clone(),
                "aux_hidden_state": _cat(states, aux)[0:1].clone()}, train)
    st, _ = real_target.boundaries(torch.tensor(mine.ids), torch.bfloat16, attn="eager")
    ot, _ = real_target.boundaries(torch.tensor(other.ids), torch.bfloat16, attn="eager")
    n = min(len(mine.ids), len(other.ids))
    files = {"train": train, "valid": len(mine.ids), "pad": width - len(mine.ids)}
    captures = {
        "ok": {"input_ids": torch.tensor(mine.ids), "aux_hidden_state": _cat(st, aux)[None]},
        "other_request": {"input_ids": torch.tensor(mine.ids[:n]), "aux_hidden_state": _cat(ot, aux)[:n][None]},
        "one_deeper": {"input_ids": torch.tensor(mine.ids), "aux_hidden_state": _cat(st, [b + 1 for b in aux])[None]},
    }
    for name, obj in captures.items():
        torch.save(obj, root / f"{name}.pt")
        files[name] = root / f"{name}.pt"
    return files
