"""A byte-level BPE trained here on templated chats (no hub), and SpecForge samples of those chats
whose hidden states come from the demo transformer (a pytest plugin: the tokens, vocab, SSH and
TUI tests use them)."""

from __future__ import annotations

import pytest
import torch

from eagle3_tui.demo.model import TinyDecoderConfig, build_model

SPECIAL = ["<|pad|>", "<|im_start|>", "<|im_end|>"]
CHATS = [
    ("What is the capital of France?", "The capital of France is Paris."),
    ("Écris un haïku sur le café ☕", "Café noir, matin —\nla tasse fume en silence,\nle jour se réveille."),
    ("日本語で挨拶して", "こんにちは！お元気ですか？"),
    ("Sum 2 and 3.\tThen double it.", "2 + 3 = 5, doubled: 10."),
]


def chat_text(user: str, answer: str) -> tuple[str, str]:
    """(prompt part, answer part) of one chat in a ChatML-like template."""
    return (f"<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
            "<|im_start|>assistant\n", f"{answer}<|im_end|>")


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    corpus = ["".join(chat_text(u, a)) for u, a in CHATS] * 20
    tok.train_from_iterator(corpus, trainer)
    folder = tmp_path_factory.mktemp("model")
    tok.save(str(folder / "tokenizer.json"))
    return folder


@pytest.fixture(scope="session")
def hf_tokenizer(tokenizer_dir):
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))


def encode_chat(tok, user: str, answer: str) -> tuple[list[int], list[int]]:
    head, tail = chat_text(user, answer)
    a, b = tok.encode(head).ids, tok.encode(tail).ids
    return a + b, [0] * len(a) + [1] * len(b)


@pytest.fixture(scope="session")
def chat_samples(tmp_path_factory, hf_tokenizer):
    """SpecForge files of every chat, right-padded by 3 rows (id 0, mask 0); returns
    [(path, ids, mask)] with the ids and mask as written (padding included)."""
    folder = tmp_path_factory.mktemp("chats") / "rows_0-2000"
    folder.mkdir()
    model = build_model(TinyDecoderConfig(vocab=hf_tokenizer.get_vocab_size(), seed=3))
    out = []
    for i, (user, answer) in enumerate(CHATS):
        ids, mask = encode_chat(hf_tokenizer, user, answer)
        ids, mask = ids + [0] * 3, mask + [0] * 3
        states, final = model.boundaries(torch.tensor(ids), torch.float32)
        aux = torch.cat([states[b] for b in (2, 5, 7)], dim=-1)
        path = folder / f"data_{i}.ckpt"
        torch.save({"input_ids": torch.tensor(ids), "loss_mask": torch.tensor(mask),
                    "aux_hidden_state": aux[None], "hidden_state": final[None]}, path)
        out.append((path, ids, mask))
    return out
