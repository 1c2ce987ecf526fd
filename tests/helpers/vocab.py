"""A draft vocabulary for the templated chats of tests/helpers/tokens.py, and vocab_mapping.pt
as SpecForge writes it (a pytest plugin: `draft_ids` serves the vocab and TUI tests)."""

from __future__ import annotations

import pytest
import torch


def write_mapping(path, draft_ids: list[int], vocab: int) -> None:
    """vocab_mapping.pt as SpecForge writes it: d2t offsets (target = draft + d2t), t2d bools."""
    draft_ids = sorted(draft_ids)
    d2t = torch.tensor(draft_ids, dtype=torch.int64) - torch.arange(len(draft_ids))
    t2d = torch.zeros(vocab, dtype=torch.bool)
    t2d[draft_ids] = True
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"d2t": d2t, "t2d": t2d}, path)


@pytest.fixture(scope="session")
def draft_ids(chat_samples, hf_tokenizer):
    """Every id of the prompts plus the first half of the loss ids of each chat: the second
    halves of the answers fall partly outside."""
    keep: set[int] = set()
    for _path, ids, mask in chat_samples:
        keep.update(i for i, m in zip(ids, mask) if not m)
        loss = [i for i, m in zip(ids, mask) if m]
        keep.update(loss[: len(loss) // 2])
    return sorted(keep)


def hand_count(chat_samples, draft_ids) -> tuple[int, int]:
    """(in, out) loss tokens over the samples, counted with plain Python sets."""
    keep = set(draft_ids)
    n_in = n_out = 0
    for _path, ids, mask in chat_samples:
        for i, m in zip(ids, mask):
            if m:
                n_in += i in keep
                n_out += i not in keep
    return n_in, n_out
