"""The demo is real text: its ids are chats tokenized by the tokenizer it writes (checked with the
`tokenizers` package), the loss mask covers the answers, and writing needs no `tokenizers`."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys

import pytest
import torch

from eagle3_tui.demo.chats import CHATS, SYSTEMS, chat_text

SHARD = "train/rows_0-2000"


def _load(path):
    if str(path).endswith(".gz"):
        with gzip.open(path, "rb") as f:
            return torch.load(io.BytesIO(f.read()), weights_only=True)
    return torch.load(path, weights_only=True)


@pytest.fixture(scope="module")
def hf(demo_dir):
    from tokenizers import Tokenizer

    d, manifest = demo_dir
    return Tokenizer.from_file(str(d / manifest["tokenizer"]))


def _chats():
    """Every (prompt text, answer text) the demo may have used, built here from the template."""
    return {"".join(chat_text(s, u, a)): chat_text(s, u, a) for s in SYSTEMS for u, a in CHATS}


def test_tokenizer_fits_the_model_and_pads_with_id_0(demo_dir, hf):
    _, manifest = demo_dir
    assert hf.get_vocab_size() == manifest["model"]["vocab"] == 1000
    assert hf.token_to_id("<|pad|>") == 0
    assert hf.token_to_id("<|im_start|>") is not None and hf.token_to_id("<|im_end|>") is not None


def test_every_training_sample_decodes_to_a_templated_chat_with_the_answer_masked(demo_dir, hf):
    d, manifest = demo_dir
    chats = _chats()
    texts = set()
    for rel in manifest["train"] + manifest["train_other"]:
        rec = _load(d / rel)
        ids, mask = rec["input_ids"].tolist(), rec["loss_mask"].tolist()
        valid = len(ids) - next(n for n, i in enumerate(reversed(ids)) if i != 0)  # right padding is id 0
        text = hf.decode(ids[:valid], skip_special_tokens=False)
        assert text in chats, (rel, text[:80])
        prompt, answer = chats[text]
        # the ids are what the tokenizer itself makes of the chat
        assert hf.encode(text).ids == ids[:valid], rel
        start = mask.index(1)
        assert all(mask[start:valid]) and not any(mask[:start]) and not any(mask[valid:])
        assert hf.decode(ids[:start], skip_special_tokens=False) == prompt
        assert hf.decode(ids[start:valid], skip_special_tokens=False) == answer
        texts.add(text)
    assert len(texts) == len(manifest["train"])  # one chat per index (the other run repeats one)
    assert any(not t.isascii() for t in texts), "some chats are not ASCII"


def test_a_multibyte_character_is_split_across_tokens_somewhere(demo_dir, hf):
    """Byte-level pieces that are not UTF-8 on their own occur in the demo: the text view must cope."""
    d, manifest = demo_dir
    ids = set()
    for rel in manifest["train"]:
        ids.update(_load(d / rel)["input_ids"].tolist())
    halves = [i for i in ids if "\ufffd" in hf.decode([i])]
    assert halves


def test_vocab_mapping_keeps_the_most_frequent_answer_tokens(demo_dir):
    d, manifest = demo_dir
    m = _load(d / "vocab_mapping/vocab_mapping.pt")
    d2t, t2d = m["d2t"], m["t2d"]
    kept = (torch.arange(len(d2t)) + d2t).tolist()  # SpecForge: target id = draft id + d2t
    assert kept == sorted(kept) and kept == t2d.nonzero().flatten().tolist()
    counts = torch.zeros(len(t2d), dtype=torch.int64)  # a hand count over the files as stored
    for rel in manifest["train"]:
        rec = _load(d / rel)
        counts += torch.bincount(rec["input_ids"][rec["loss_mask"] == 1], minlength=len(t2d))
    assert counts[t2d].min() >= counts[~t2d].max()
    share = 100 * int(counts[t2d].sum()) / int(counts.sum())
    assert f"they cover {share:.1f}% of the loss-masked tokens" in (d / "README.txt").read_text()


def test_the_layer_id_capture_is_named_a_shift_not_a_permutation(demo_dir):
    """Issue 9: ids [0, 2, 3] against [1, 3, 4] under the other reading; B2 lands on A1."""
    from eagle3_tui.engines.compare import compare_files

    d, manifest = demo_dir
    c = next(c for c in manifest["infer"] if c["file"].endswith("fault_layer_ids_s20.pt"))
    assert c["train"] in manifest["train_other"]
    r = compare_files(str(d / c["train"]), str(d / c["file"]))
    assert {f["code"] for f in r["findings"]} == {"slot_mismatch"}
    f = r["findings"][0]
    assert (f["shift"]["direction"], f["shift"]["slots"]) == (c["shift"], c["shift_slots"]) == ("shallower", -1)
    assert [s["slot"] for s in f["slots"]] == [0, 1, 2]
    assert next(s for s in f["slots"] if s["slot"] == 2)["holds"] == 1
    assert "one boundary off" in f["message"]
    # the other run wrote the same chat as train/'s data_20 (the default layer ids)
    same = _load(d / SHARD / "data_20.ckpt")["input_ids"]
    other = _load(d / c["train"])["input_ids"]
    assert torch.equal(same[: len(other)], other)


def test_writing_the_demo_needs_no_tokenizers_package(tmp_path, demo_dir):
    d, manifest = demo_dir
    code = ("import sys; sys.modules['tokenizers'] = None\n"
            "from eagle3_tui.demo.dataset import write_demo\n"
            f"write_demo({str(tmp_path / 'd')!r}, seed=0)\n")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=300)
    for rel in (manifest["tokenizer"], manifest["train"][0], "README.txt"):
        written = (tmp_path / "d" / rel).read_bytes()
        if rel == "README.txt":  # its commands name the folder as it was given
            written = written.replace(str(tmp_path / "d").encode(), str(d).encode())
        assert written == (d / rel).read_bytes(), rel
