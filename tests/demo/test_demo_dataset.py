"""The demo dataset: layout and schema as FORMATS.md describes SpecForge, determinism, size."""

from __future__ import annotations

import argparse
import gzip
import io
import os

import pytest
import torch

from eagle3_tui.demo.dataset import write_demo
from eagle3_tui.demo.layout import MISSING
from eagle3_tui.demo.model import build_model

SHARD = "train/rows_0-2000"


def _load(path):
    if str(path).endswith(".gz"):
        with gzip.open(path, "rb") as f:
            return torch.load(io.BytesIO(f.read()), weights_only=True)
    return torch.load(path, weights_only=True)


def test_training_shards_follow_the_specforge_layout(demo_dir):
    d, manifest = demo_dir
    names = sorted(os.listdir(d / SHARD))
    indices = sorted(int(n.split("_")[1].split(".")[0]) for n in names)
    assert indices == [i for i in range(26) if i not in MISSING]  # a few numbers missing
    assert "data_3.ckpt.gz" in names and all(n.endswith((".ckpt", ".ckpt.gz")) for n in names)
    pt_names = sorted(os.listdir(d / "train_pt/rows_0-2000"))
    assert len(pt_names) == len(names) and all(n.endswith(".pt") for n in pt_names)
    assert os.path.isfile(d / "vocab_mapping/vocab_mapping.pt")
    assert set(_load(d / "vocab_mapping/vocab_mapping.pt")) == {"d2t", "t2d"}
    assert len(manifest["train"]) == len(names)


def test_a_training_sample_holds_post_norm_final_and_pre_norm_aux_at_the_default_boundaries(demo_dir):
    d, _ = demo_dir
    rec = _load(d / SHARD / "data_3.ckpt.gz")
    t = rec["input_ids"].shape[0]
    assert rec["input_ids"].dtype == torch.int64 and rec["loss_mask"].dtype == torch.int64
    assert rec["hidden_state"].shape == (1, t, 64) and rec["aux_hidden_state"].shape == (1, t, 192)
    model = build_model(seed=0)
    states, final = model.boundaries(rec["input_ids"])
    aux = rec["aux_hidden_state"][0]
    for k, b in enumerate((2, 5, 7)):
        torch.testing.assert_close(aux[:, 64 * k : 64 * (k + 1)], states[b], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(rec["hidden_state"][0], final, rtol=1e-4, atol=1e-4)
    # and the .pt copy holds the same tensors
    same = _load(d / "train_pt/rows_0-2000/data_3.pt")
    assert all(torch.equal(rec[k], same[k]) for k in rec)


def test_batches_are_right_padded_with_nonzero_hidden_rows(demo_dir):
    d, _ = demo_dir
    padded = 0
    for name in os.listdir(d / SHARD):
        rec = _load(d / SHARD / name)
        ids, mask = rec["input_ids"], rec["loss_mask"]
        real = int((ids != 0).nonzero().max()) + 1
        if real < len(ids):
            padded += 1
            assert (ids[real:] == 0).all() and (mask[real:] == 0).all()
            assert (rec["aux_hidden_state"][0, real:].norm(dim=-1) > 0).all()
        assert mask[:real].sum() > 0 and mask[0] == 0  # loss only on the response
    assert padded >= 10


def test_residual_norms_grow_with_depth_and_bf16_is_only_noise():
    model = build_model(seed=0)
    ids = torch.randint(20, 1000, (2, 64), generator=torch.Generator().manual_seed(0))
    s32, _ = model.boundaries(ids)
    s16, _ = model.boundaries(ids, torch.bfloat16)
    means = [s[:, 1:].norm(dim=-1).mean().item() for s in s32]
    assert all(b > a for a, b in zip(means, means[1:]))
    assert means[-1] > 10 * means[0]
    for b in (2, 5, 7):
        cos = torch.nn.functional.cosine_similarity(s32[b], s16[b].float(), dim=-1)
        assert cos.mean() > 0.999 and cos.min() > 0.99


def test_same_seed_same_bytes_other_seed_other_data(tmp_path, demo_dir):
    d, manifest = demo_dir
    again = write_demo(str(tmp_path / "again"), seed=0)
    files = [*manifest["train"], *manifest["train_pt"], *(c["file"] for c in manifest["infer"]), "README.txt"]
    assert [c["file"] for c in again["infer"]] == [c["file"] for c in manifest["infer"]]
    for rel in files:
        mine, again_bytes = (d / rel).read_bytes(), (tmp_path / "again" / rel).read_bytes()
        if rel == "README.txt":  # its commands name the folder as it was given
            again_bytes = again_bytes.replace(str(tmp_path / "again").encode(), str(d).encode())
        assert mine == again_bytes, rel
    other = write_demo(str(tmp_path / "other"), seed=1)
    a = _load(d / SHARD / "data_0.ckpt")["aux_hidden_state"]
    b = _load(tmp_path / "other" / other["train"][0])["aux_hidden_state"]
    assert a.shape != b.shape or not torch.equal(a, b)


def test_size_and_readme_cover_every_capture(demo_dir):
    d, manifest = demo_dir
    assert manifest["bytes"] < 50e6
    readme = (d / "README.txt").read_text()
    infer = sorted(os.listdir(d / "infer"))
    assert len(infer) == len(manifest["infer"]) >= 15
    for c in manifest["infer"]:
        assert os.path.basename(c["file"]) in infer
        assert f"{c['file']} | {c['train']} | {c['expect'] or 'none'} |" in readme
    assert {os.path.basename(c["file"]) for c in manifest["infer"]} >= {"fault_layer_ids_s20.pt"}
    expected = {c["expect"] for c in manifest["infer"]} - {None}
    assert expected == {"slot_mismatch", "slot_permutation", "width_mismatch", "norm_mismatch", "scale_mismatch",
                        "unrelated_sample", "token_divergence", "token_shift", "nonfinite", "padding"}


def test_speculators_capture_is_valid_safetensors(demo_dir):
    from safetensors.torch import load_file

    d, _ = demo_dir
    t = load_file(str(d / "infer/hs_5.safetensors"))
    rec = _load(d / SHARD / "data_5.ckpt")
    n = t["token_ids"].shape[0]
    assert t["hidden_states"].shape == (n, 4, 64) and t["hidden_states"].dtype == torch.bfloat16
    assert torch.equal(t["token_ids"], rec["input_ids"][:n])


def test_demo_refuses_a_folder_that_is_not_a_demo(tmp_path, capsys):
    from eagle3_tui.commands import demo

    (tmp_path / "mine.txt").write_text("precious")
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    assert demo.run(parser.parse_args([str(tmp_path), "--write-only"])) == 1
    assert "not empty" in capsys.readouterr().err
    assert (tmp_path / "mine.txt").read_text() == "precious" and len(os.listdir(tmp_path)) == 1


def test_demo_command_writes_then_opens_the_tui_and_may_rewrite_an_earlier_demo(tmp_path, capsys, monkeypatch):
    from eagle3_tui.commands import demo, tui

    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    target = tmp_path / "demo"
    assert demo.run(parser.parse_args([str(target), "--write-only", "--seed", "2"])) == 0
    out = capsys.readouterr().out
    assert "eagle3-tui compare" in out and str(target) in out
    assert "seed 2" in (target / "README.txt").read_text()
    # again over the earlier demo, this time opening the TUI on it
    opened = []
    monkeypatch.setattr(tui, "main", lambda argv: opened.append(argv) or 0)
    assert demo.run(parser.parse_args([str(target), "--seed", "0"])) == 0
    # tokens shown as text, the layers from the demo's target model, acceptance from its own drafter
    assert opened == [[str(target), "--tokenizer", str(target / "model"), "--model", str(target / "model"),
                       "--drafter", str(target / "drafter")]]
    args = tui.build_parser().parse_args(opened[0])  # arguments the TUI accepts, naming real folders
    assert os.path.isfile(os.path.join(args.tokenizer, "tokenizer.json"))
    assert os.path.isfile(os.path.join(args.model, "config.json"))
    assert os.path.isfile(os.path.join(args.model, "model.safetensors"))
    assert os.path.isfile(os.path.join(args.drafter, "config.json"))
    assert os.path.isfile(os.path.join(args.drafter, "model.safetensors"))
    readme = (target / "README.txt").read_text()
    assert "seed 0" in readme
    for name in os.listdir(target / "infer"):  # infer/ holds what README.txt lists, nothing stale
        assert f"infer/{name} |" in readme
