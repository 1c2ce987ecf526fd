"""A SpecForge dataset of templated chats (tests/helpers/tokens.py) with a draft vocabulary next to it."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers.vocab import write_mapping


@pytest.fixture()
def dataset(tmp_path, chat_samples, draft_ids, hf_tokenizer):
    """DATASET/rows_0-2000/data_*.ckpt and DATASET/vocab_mapping/vocab_mapping.pt."""
    root = tmp_path / "dataset"
    shard = root / "rows_0-2000"
    shard.mkdir(parents=True)
    for path, _ids, _mask in chat_samples:
        shutil.copy(path, shard / path.name)
    write_mapping(root / "vocab_mapping" / "vocab_mapping.pt", draft_ids, hf_tokenizer.get_vocab_size())
    return root
