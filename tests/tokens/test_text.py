"""Token ids read as text: per token, loss spans, a tokenizer that does not fit, the CLI."""

from __future__ import annotations

import json
import sys

import pytest

from eagle3_tui.engines.read.tokens import TokenizerError, load_tokenizer, visible
from tests.helpers import warm_cli
from tests.helpers.tokens import CHATS, SPECIAL, encode_chat


def run_cli(*args, env=None):
    return warm_cli.run([sys.executable, "-m", "eagle3_tui", *args], text=True, timeout=120, env=env)


def test_each_token_shows_its_own_bytes_and_together_they_are_the_text(tokenizer_dir, hf_tokenizer):
    tok = load_tokenizer(str(tokenizer_dir))
    for user, answer in CHATS:
        ids, _ = encode_chat(hf_tokenizer, user, answer)
        shown = tok.tokens(ids)
        assert len(shown) == len(ids)
        # the byte pieces, joined, are exactly what the tokenizer itself decodes
        joined = b"".join(b"" if i in tok.special else tok.piece_bytes(i) for i in ids)
        assert joined.decode("utf-8") == hf_tokenizer.decode(ids, skip_special_tokens=True)
        for i, s in zip(ids, shown):
            assert "\ufffd" not in s  # never a replacement character
            assert not any(c in s for c in " \n\t\r\x1b")  # whitespace and controls are visible
            piece = hf_tokenizer.decode([i], skip_special_tokens=False)
            if i in tok.special:
                assert s == piece and s in SPECIAL
            elif "\ufffd" not in piece:
                assert s == visible(piece)  # a whole character: the text itself, made visible


def test_a_piece_of_a_multibyte_character_shows_its_bytes(tokenizer_dir, hf_tokenizer):
    tok = load_tokenizer(str(tokenizer_dir))
    ids = hf_tokenizer.encode("日本語で挨拶して").ids
    halves = [i for i in ids if "\ufffd" in hf_tokenizer.decode([i])]
    assert halves, "the corpus should split some CJK characters across tokens"
    for i in halves:
        raw = tok.piece_bytes(i)
        assert "\\x" in tok.token(i)
        assert tok.token(i).count("\\x") == len(raw) - len(raw.decode("utf-8", "ignore").encode())


def test_special_tokens_and_whitespace_are_visible(tokenizer_dir, hf_tokenizer):
    tok = load_tokenizer(str(tokenizer_dir))
    ids = hf_tokenizer.encode("<|im_start|>user\nSum 2 and 3.\tThen").ids
    shown = tok.tokens(ids)
    assert shown[0] == "<|im_start|>"
    assert "↵" in "".join(shown) and "⇥" in "".join(shown) and "␣" in "".join(shown)


def test_loss_spans_are_the_trained_text_of_the_valid_rows(tokenizer_dir, hf_tokenizer, chat_samples):
    tok = load_tokenizer(str(tokenizer_dir))
    for (path, ids, mask), (user, answer) in zip(chat_samples, CHATS):
        valid = len(ids) - 3
        spans = tok.loss_spans(ids, mask, valid)
        ones = [t for t in range(valid) if mask[t]]
        assert [(s["start"], s["end"]) for s in spans] == [(ones[0], ones[-1] + 1)]
        assert spans[0]["text"] == answer + "<|im_end|>"


def test_a_tokenizer_smaller_than_the_ids_is_refused_not_misread(tmp_path, chat_samples):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    small = Tokenizer(models.BPE())
    small.pre_tokenizer = pre_tokenizers.ByteLevel()
    small.train_from_iterator(["tiny"], trainers.BpeTrainer(vocab_size=50, initial_alphabet=list("tiny")))
    small.save(str(tmp_path / "tokenizer.json"))
    path, ids, _ = chat_samples[0]
    out = run_cli("summary", str(path), "--json", "--tokenizer", str(tmp_path))
    result = json.loads(out.stdout)
    assert "text" not in result
    assert f"has id {max(ids)}" in result["text_error"] and "not the tokenizer" in result["text_error"]
    assert out.returncode == 0  # the numbers loaded; the text is refused, with its reason


def test_summary_json_carries_text_and_loss_spans(tokenizer_dir, chat_samples):
    path, ids, mask = chat_samples[1]
    out = run_cli("summary", str(path), "--json", "--tokenizer", str(tokenizer_dir / "tokenizer.json"))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert len(result["text"]) == len(ids)
    assert result["text"][-1] == "<|pad|>"  # padding rows are id 0, shown as what id 0 is
    assert [s["text"] for s in result["loss_spans"]] == [CHATS[1][1] + "<|im_end|>"]


def test_the_environment_variable_sets_the_default_tokenizer_and_the_table_shows_the_spans(
        tokenizer_dir, chat_samples):
    import os

    path, _, _ = chat_samples[2]
    env = {**os.environ, "EAGLE3_TUI_TOKENIZER": str(tokenizer_dir)}
    out = run_cli("summary", str(path), env=env)
    assert out.returncode == 0, out.stderr
    assert "trained on (1 span of loss mask 1):" in out.stdout
    assert CHATS[2][1] in out.stdout


def test_not_a_tokenizer_is_one_line(tmp_path, chat_samples):
    (tmp_path / "tokenizer.json").write_text("{\"not\": \"a tokenizer\"}")
    with pytest.raises(TokenizerError) as err:
        load_tokenizer(str(tmp_path))
    assert "not a tokenizers tokenizer.json" in str(err.value) and "\n" not in str(err.value)
    path, _, _ = chat_samples[0]
    out = run_cli("summary", str(path), "--tokenizer", str(tmp_path / "missing"))
    assert out.returncode == 0 and "text: " in out.stdout and "no such tokenizer" in out.stdout


def test_compare_names_the_diverging_text(tokenizer_dir, hf_tokenizer, chat_samples, tmp_path):
    import torch

    from eagle3_tui.demo.model import TinyDecoderConfig, build_model

    path, ids, mask = chat_samples[0]
    valid = len(ids) - 3
    drifted = list(ids[:valid])
    cut = mask.index(1) - 2  # inside the template, before the answer
    drifted[cut] = hf_tokenizer.token_to_id("<|im_end|>")
    model = build_model(TinyDecoderConfig(vocab=hf_tokenizer.get_vocab_size(), seed=3))
    states, final = model.boundaries(torch.tensor(drifted), torch.bfloat16)
    capture = tmp_path / "capture.pt"
    torch.save({"input_ids": torch.tensor(drifted),
                "aux_hidden_state": torch.cat([states[b] for b in (2, 5, 7)], -1)}, capture)
    out = run_cli("compare", str(path), str(capture), "--json", "--tokenizer", str(tokenizer_dir))
    result = json.loads(out.stdout)
    div = next(f for f in result["findings"] if f["code"] == "token_divergence")
    assert div["a_text"] == visible(hf_tokenizer.decode([ids[cut]], skip_special_tokens=False))
    assert div["b_text"] == "<|im_end|>"
    assert 'B "<|im_end|>"' in div["message"]
    assert result["rows"]["a_text"][: cut] == result["rows"]["b_text"][: cut]
