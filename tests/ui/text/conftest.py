"""The TUI on a dataset of templated chats (the BPE tokenizer and samples of tests/tokens), with
its draft vocabulary at DATASET/vocab_mapping/vocab_mapping.pt (tests/vocab)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eagle3_tui.sources.local import LocalSource
from eagle3_tui.ui.analysis import Analysis
from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.connect import Opened
from tests.tokens.conftest import chat_samples, hf_tokenizer, tokenizer_dir  # noqa: F401 - fixtures
from tests.vocab.conftest import draft_ids, write_mapping  # noqa: F401 - fixtures


@pytest.fixture(scope="session")
def chats(tmp_path_factory, chat_samples, draft_ids, hf_tokenizer):  # noqa: F811
    root = tmp_path_factory.mktemp("chatset")
    shard = root / "rows_0-2000"
    shard.mkdir()
    for path, _ids, _mask in chat_samples:
        shutil.copy(path, shard / path.name)
    write_mapping(root / "vocab_mapping" / "vocab_mapping.pt", draft_ids, hf_tokenizer.get_vocab_size())
    return root


def text_app(target: Path, tokenizer: Path | None, data_dir: Path, **options) -> Eagle3App:
    source = LocalSource()

    async def opener(text, **_kwargs):
        return Opened(source, str(Path(text).resolve()), "local")

    return Eagle3App(str(target), opener=opener, data_dir=str(data_dir),
                     analysis=Analysis.from_options(str(tokenizer) if tokenizer else None, **options))
