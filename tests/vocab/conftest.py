"""A SpecForge dataset of templated chats (tests/tokens) with a draft vocabulary next to it."""

from __future__ import annotations

import shutil

import pytest
import torch

from tests.tokens.conftest import chat_samples, hf_tokenizer, tokenizer_dir  # noqa: F401 - fixtures


def write_mapping(path, draft_ids: list[int], vocab: int) -> None:
    """vocab_mapping.pt as SpecForge writes it: d2t offsets (target = draft + d2t), t2d bools."""
    draft_ids = sorted(draft_ids)
    d2t = torch.tensor(draft_ids, dtype=torch.int64) - torch.arange(len(draft_ids))
    t2d = torch.zeros(vocab, dtype=torch.bool)
    t2d[draft_ids] = True
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"d2t": d2t, "t2d": t2d}, path)


@pytest.fixture(scope="session")
def draft_ids(chat_samples, hf_tokenizer):  # noqa: F811
    """Every id of the prompts plus the first half of the loss ids of each chat: the second
    halves of the answers fall partly outside."""
    keep: set[int] = set()
    for _path, ids, mask in chat_samples:
        keep.update(i for i, m in zip(ids, mask) if not m)
        loss = [i for i, m in zip(ids, mask) if m]
        keep.update(loss[: len(loss) // 2])
    return sorted(keep)


@pytest.fixture()
def dataset(tmp_path, chat_samples, draft_ids, hf_tokenizer):  # noqa: F811
    """DATASET/rows_0-2000/data_*.ckpt and DATASET/vocab_mapping/vocab_mapping.pt."""
    root = tmp_path / "dataset"
    shard = root / "rows_0-2000"
    shard.mkdir(parents=True)
    for path, _ids, _mask in chat_samples:
        shutil.copy(path, shard / path.name)
    write_mapping(root / "vocab_mapping" / "vocab_mapping.pt", draft_ids, hf_tokenizer.get_vocab_size())
    return root


def hand_count(chat_samples, draft_ids) -> tuple[int, int]:  # noqa: F811
    """(in, out) loss tokens over the samples, counted with plain Python sets."""
    keep = set(draft_ids)
    n_in = n_out = 0
    for _path, ids, mask in chat_samples:
        for i, m in zip(ids, mask):
            if m:
                n_in += i in keep
                n_out += i not in keep
    return n_in, n_out
