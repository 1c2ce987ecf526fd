"""The demo's target model folder: a Llama that transformers loads, whose forward gives exactly the
states the demo stored, so `identify --model eagle3-demo/model` names each run's layers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from eagle3_tui.demo.layout import CONVENTION_IDS
from eagle3_tui.engines.read.load import load_sample

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def llama(demo_dir):
    from transformers import LlamaForCausalLM

    d, _ = demo_dir
    return LlamaForCausalLM.from_pretrained(d / "model", dtype=torch.float32).eval()


def _hf_boundaries(lm, ids: torch.Tensor):
    """b = 0..L (b = L the final norm's input) and the final norm's output, from transformers."""
    seen = {}
    handle = lm.model.norm.register_forward_hook(lambda _m, a, out: seen.update(pre=a[0], post=out))
    try:
        with torch.no_grad():
            out = lm(ids[None], output_hidden_states=True, use_cache=False)
    finally:
        handle.remove()
    return [h[0] for h in out.hidden_states[:-1]] + [seen["pre"][0]], seen["post"][0]


def _assert_same(a: torch.Tensor, b: torch.Tensor) -> None:
    """The same float32 computation up to summation order: cosine 1 on every row, tiny abs error."""
    cos = torch.nn.functional.cosine_similarity(a.float(), b.float(), dim=-1)
    assert cos.min() > 0.99999
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-3)


def test_transformers_reproduces_every_stored_training_state(demo_dir, llama):
    d, manifest = demo_dir
    cfg = json.loads((d / "model" / "config.json").read_text())
    assert cfg["architectures"] == ["LlamaForCausalLM"] and cfg["num_hidden_layers"] == 10
    for rel in (manifest["train"][0], manifest["train"][5], manifest["train_other"][0]):
        s = load_sample(str(d / rel))  # padding included: the row was run as stored (causal attention)
        states, final = _hf_boundaries(llama, s.ids)
        bounds = (2, 5, 7) if rel.startswith("train/") else tuple(b + 1 for b in CONVENTION_IDS)
        for slot, b in zip(s.slots, bounds):
            _assert_same(slot.tensor, states[b])
        _assert_same(s.final.tensor, final)


def test_the_massive_activation_comes_from_the_weights(demo_dir, llama):
    """The first token's huge channel appears after layer 1 in transformers' own run: nothing was
    added to the states afterwards. Embeddings stay ordinary."""
    d, manifest = demo_dir
    s = load_sample(str(d / manifest["train"][0]))
    states, _ = _hf_boundaries(llama, s.ids)
    emb, after1 = states[0], states[2]
    assert emb.abs().max() < 10
    chan = int(after1[0].abs().argmax())
    assert after1[0, chan].abs() > 50  # the first token, <|im_start|>
    others = [t for t in range(len(s.ids)) if int(s.ids[t]) != int(s.ids[0])]
    median_norm = after1[others].norm(dim=-1).median()
    assert after1[0].norm() > 5 * median_norm
    assert s.slots[0].tensor[0, chan].abs() > 50  # and the stored aux0 (b = 2) has it too


def test_the_weights_file_is_standard_safetensors_without_the_package_at_runtime(demo_dir):
    from safetensors.torch import load_file  # the test extra: an independent reader

    d, _ = demo_dir
    tensors = load_file(str(d / "model" / "model.safetensors"))
    assert tensors["model.embed_tokens.weight"].shape == (1000, 64)
    assert tensors["model.layers.9.mlp.down_proj.weight"].dtype == torch.float32
    code = "import sys, eagle3_tui.demo.dataset; print('safetensors' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_identify_names_each_runs_layers_on_the_demo(demo_dir):
    from eagle3_tui.engines.model.identify import identify_file

    d, manifest = demo_dir
    model = str(d / "model")
    train = identify_file(str(d / manifest["train"][0]), model, device="cpu")
    assert [row["boundary"] for row in train["slots"]] == [2, 5, 7]
    assert all(row["status"] == "match" for row in train["slots"])
    other = identify_file(str(d / manifest["train_other"][0]), model, device="cpu")
    assert [row["boundary"] for row in other["slots"]] == [1, 3, 4]
    # a capture one layer late (bf16, no token ids: borrowed from its training sample) is named as such
    late = next(c for c in manifest["infer"] if os.path.basename(c["file"]).startswith("fault_layers_all"))
    shifted = identify_file(str(d / late["file"]), model, device="cpu", ids_from=str(d / late["train"]))
    assert [row["boundary"] for row in shifted["slots"]] == [3, 6, 8]


def test_the_target_models_own_next_tokens_follow_the_text(demo_dir, llama):
    """Its LM head was fitted to the chats: `accept --model` (targets from the model) then measures
    the drafter against tokens that mostly are the text's, as with a trained target."""
    d, manifest = demo_dir
    hits = rows = 0
    for rel in manifest["train"][:4]:
        s = load_sample(str(d / rel))
        v = s.valid_len
        with torch.no_grad():
            guess = llama(s.ids[None, :v], use_cache=False).logits[0, :-1].argmax(-1)
        hits += int((guess == s.ids[1:v]).sum())
        rows += v - 1
    assert hits / rows > 0.6


def test_readme_lists_the_model_and_the_drafter(tmp_path):
    from eagle3_tui.demo.dataset import write_demo

    manifest = write_demo(str(tmp_path / "d"), seed=0, drafter=True)
    readme = (tmp_path / "d" / "README.txt").read_text()
    d = tmp_path / "d"  # the commands name the folder as it was given
    assert "model/  the target model" in readme and f"identify {d}/train/rows_0-2000/data_0.ckpt --model {d}/model" in readme
    assert "drafter/  an EAGLE-3 drafter" in readme and manifest["drafter"] == "drafter"
    assert (tmp_path / "d" / "drafter" / "config.json").is_file()
