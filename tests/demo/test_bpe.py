"""The pure-Python byte-level BPE against the `tokenizers` package reading its tokenizer.json."""

from __future__ import annotations

import pytest

from eagle3_tui.demo import bpe

SPECIAL = ["<|pad|>", "<|im_start|>", "<|im_end|>"]
CORPUS = [
    "<|im_start|>user\nHow are you today?<|im_end|>\n<|im_start|>assistant\nFine, thanks! And you?<|im_end|>",
    "Café crème, s'il vous plaît. Ça fait 3,50 €.",
    "東京は日本の首都です。東京タワーは333メートルです。",
    "def f(x):\n    return x * 2  # doubles\n\tdone 🚀🚀",
] * 3
UNSEEN = [
    "A sentence the trainer never saw: naïve Zürich 🦊, 42 apples\n\n  indented",
    "<|im_start|>user\n北京と東京<|im_end|>",
    "tabs\tand   spaces  \n",
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from tokenizers import Tokenizer

    tok = bpe.train(CORPUS, 400, SPECIAL)
    path = tmp_path_factory.mktemp("bpe") / "tokenizer.json"
    tok.save(str(path))
    return tok, Tokenizer.from_file(str(path))


def test_vocabulary_is_the_size_asked_with_specials_first(trained):
    tok, hf = trained
    assert len(tok) == hf.get_vocab_size() == 400
    assert [hf.token_to_id(s) for s in SPECIAL] == [0, 1, 2]
    assert len(tok.merges) >= 400 - 3 - 256


@pytest.mark.parametrize("text", CORPUS[:4] + UNSEEN)
def test_encode_matches_tokenizers_and_decodes_back(trained, text):
    tok, hf = trained
    ids = tok.encode(text)
    assert hf.decode(ids, skip_special_tokens=False) == text == tok.decode(ids)
    assert hf.encode(text).ids == ids


def test_merges_compress_the_training_text(trained):
    tok, _ = trained
    text = CORPUS[0]
    assert len(tok.encode(text)) < len(text.encode()) / 3


def test_a_small_corpus_stops_when_no_pair_is_left():
    tok = bpe.train(["ab ab"], 1000, [])
    assert 256 < len(tok) < 1000 and tok.decode(tok.encode("ab ab")) == "ab ab"


def test_same_corpus_same_tokenizer():
    assert bpe.train(CORPUS, 350, SPECIAL).to_json() == bpe.train(list(CORPUS), 350, SPECIAL).to_json()
