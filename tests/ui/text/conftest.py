"""The TUI on a dataset of templated chats (the BPE tokenizer and samples of
tests/helpers/tokens.py), with its draft vocabulary at DATASET/vocab_mapping/vocab_mapping.pt
(tests/helpers/vocab.py); the app is tests/helpers/tui.py's text_app."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers.vocab import write_mapping


@pytest.fixture(scope="session")
def chats(tmp_path_factory, chat_samples, draft_ids, hf_tokenizer):
    root = tmp_path_factory.mktemp("chatset")
    shard = root / "rows_0-2000"
    shard.mkdir()
    for path, _ids, _mask in chat_samples:
        shutil.copy(path, shard / path.name)
    write_mapping(root / "vocab_mapping" / "vocab_mapping.pt", draft_ids, hf_tokenizer.get_vocab_size())
    return root
