"""Small hand-built files in every schema FORMATS.md lists, seeded."""

from __future__ import annotations

import gzip

import pytest
import torch

from tests.helpers.sample_files import make_tensors, write_safetensors


@pytest.fixture
def files(tmp_path):
    """name -> (path, expected parts) for every schema."""
    ids, mask, aux, final = make_tensors(pad=2)
    out = {}

    p = tmp_path / "rows_0-2000" / "data_0.ckpt"
    p.parent.mkdir()
    torch.save(
        {
            "input_ids": ids,
            "loss_mask": mask,
            "hidden_state": final.unsqueeze(0),
            "aux_hidden_state": torch.cat(aux, -1).unsqueeze(0),
        },
        p,
    )
    out["specforge"] = p

    gz = tmp_path / "data_1.ckpt.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    out["specforge_gz"] = gz

    p = tmp_path / "eagle2.ckpt"
    torch.save({"input_ids": ids, "hidden_state": final.half(), "loss_mask": mask}, p)
    out["eagle12"] = p

    p = tmp_path / "hs_0.safetensors"
    write_safetensors(
        p,
        {"token_ids": ids, "hidden_states": torch.stack([*aux, final], dim=1).bfloat16()},
        metadata={"layer_ids": "[2, 6, 9]"},
    )
    out["speculators"] = p

    p = tmp_path / "legacy.pt"
    torch.save({"input_ids": ids, "loss_mask": mask, "hidden_states": [*aux, final]}, p)
    out["speculators_legacy"] = p

    p = tmp_path / "bare.pt"
    torch.save(torch.cat(aux, -1), p)
    out["bare"] = p

    p = tmp_path / "bare_batch.pt"
    torch.save(torch.cat(aux, -1).unsqueeze(0), p)
    out["bare_batch"] = p

    p = tmp_path / "list.pt"
    torch.save(list(aux), p)
    out["list"] = p

    p = tmp_path / "tuple.pt"
    torch.save(tuple(aux), p)
    out["tuple"] = p

    p = tmp_path / "no_ids.pt"
    torch.save({"aux_hidden_state": torch.cat(aux, -1), "hidden_state": final}, p)
    out["dict_no_ids"] = p

    p = tmp_path / "vocab_mapping.pt"
    torch.save({"d2t": torch.arange(32), "t2d": torch.ones(64, dtype=torch.bool)}, p)
    out["vocab"] = p

    return out, (ids, mask, aux, final)
