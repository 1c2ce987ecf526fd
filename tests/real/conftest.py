"""Files made from the real model's states (tests/helpers/real_world.py): a SpecForge training
sample written the way SpecForge writes one (bf16, SDPA, a right-padded batch of two chats, pad id
0) and inference captures of the same chat (one bf16 request, eager attention), correct and faulty, on each
real family (`real_target` is parametrized)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.helpers.autouse import _no_ssh_agent, _one_torch_thread  # noqa: F401 - autouse fixtures


def pytest_collection_modifyitems(config, items):
    """The tests here run in one xdist worker: their module fixtures run the real models (the faulty
    captures, the 30 correct pairs, the scan datasets), which each worker that ran one of a module's
    tests built again, and on a fresh machine the first of them builds each model's folder and chats
    under a lock that the other worker sat idle on (49 s of a 9-minute run)."""
    here = Path(__file__).parent
    for item in items:
        if item.path.parent == here:
            item.add_marker(pytest.mark.xdist_group("real"))


def mid_layer_states(target, ids: list[int], dtype) -> list[torch.Tensor]:
    """Per layer, the residual after attention and before the MLP (the input of the MLP's norm:
    pre_feedforward_layernorm in Gemma's sandwich, post_attention_layernorm in a Llama), one
    request with eager attention, as a capture hook placed one module early records it."""
    model = target.lm(dtype, "eager")
    got: dict[int, torch.Tensor] = {}
    hooks = []
    for i, layer in enumerate(model.model.layers):
        norm = getattr(layer, "pre_feedforward_layernorm", None) or layer.post_attention_layernorm
        hooks.append(norm.register_forward_hook(lambda _m, a, _o, i=i: got.__setitem__(i, a[0][0].to(dtype))))
    try:
        with torch.no_grad():
            model(torch.tensor([ids]), use_cache=False)
    finally:
        for h in hooks:
            h.remove()
    return [got[i] for i in range(len(got))]


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
    st, fin = real_target.boundaries(torch.tensor(mine.ids), torch.bfloat16, attn="eager")
    ot, _ = real_target.boundaries(torch.tensor(other.ids), torch.bfloat16, attn="eager")
    mid = mid_layer_states(real_target, mine.ids, torch.bfloat16)
    n = min(len(mine.ids), len(other.ids))
    files = {"train": train, "valid": len(mine.ids), "pad": width - len(mine.ids)}
    ids = torch.tensor(mine.ids)
    late = (torch.arange(len(mine.ids)) - 1).clamp(min=0)  # row t holds row t - 1: one token late
    captures = {
        "ok": {"input_ids": ids, "aux_hidden_state": _cat(st, aux)[None]},
        "ok_final": {"input_ids": ids, "aux_hidden_state": _cat(st, aux)[None], "hidden_state": fin[None]},
        "other_request": {"input_ids": torch.tensor(mine.ids[:n]), "aux_hidden_state": _cat(ot, aux)[:n][None]},
        "one_deeper": {"input_ids": ids, "aux_hidden_state": _cat(st, [b + 1 for b in aux])[None]},
        # the residual at L, not the final norm's output, in SpecForge's layout (which says "post")
        "pre_norm_final": {"input_ids": ids, "aux_hidden_state": _cat(st, aux)[None], "hidden_state": st[-1][None]},
        "one_token_late": {"input_ids": ids, "aux_hidden_state": _cat(st, aux)[late][None],
                           "hidden_state": fin[late][None]},
        # slot 1 taken inside its layer: after attention, before the MLP
        "mid_layer_slot1": {"input_ids": ids, "aux_hidden_state": torch.cat(
            [st[aux[0]], mid[aux[1] - 1], st[aux[2]]], -1)[None], "hidden_state": fin[None]},
    }
    for name, obj in captures.items():
        torch.save(obj, root / f"{name}.pt")
        files[name] = root / f"{name}.pt"
    return files
