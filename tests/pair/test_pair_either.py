"""P on a training sample (dataset/pair.py pair_either): the capture it pins is one whose own
pairing ranks that sample first. Over every training sample of the demo (train/, train_pt/,
train_ids_0_2_3/): never a capture of another prompt (before, a capture that only shared the
system prompt was pinned: 13 of the 23 samples of train/ it pinned one for), every capture with token ids and no
loss mask is found from its samples, and P on every capture pairs as `eagle3-tui pair` does."""

from __future__ import annotations

import asyncio
from pathlib import Path

from eagle3_tui.dataset.pair import pair_capture, pair_either
from eagle3_tui.sources.local import LocalSource
from eagle3_tui.ui.main.pairing import pair_dataset
from tests.helpers.pair import demo_pairs

TRAINING = ("train", "train_pt", "train_ids_0_2_3")


def _stem(path: str) -> str:
    return Path(path).name.split(".")[0]  # data_20.ckpt and data_20.pt: the same prompt's sample


def _rows(demo: Path) -> dict[str, str]:
    """capture -> the README's training sample, for the captures P on a sample can find: token ids
    and no loss mask (a bare tensor or a list has no ids; SpecForge's schema carries a loss mask)."""
    text = {line.split("|")[0].strip(): line for line in (demo / "README.txt").read_text().splitlines()}
    return {c: s for c, s, has_ids in demo_pairs(demo)
            if has_ids and "loss_mask" not in text[c] and "SpecForge schema" not in text[c]}


def test_p_on_a_training_sample_pins_its_own_capture_or_none(demo):
    root = str(demo)
    findable = _rows(demo)
    assert len(findable) >= 9
    samples = sorted(p for top in TRAINING for p in (demo / top).rglob("data_*"))

    async def run():
        source = LocalSource()
        return [await pair_either(source, str(s), pair_dataset(root, str(s))) for s in samples]

    results = asyncio.run(run())
    found = {}
    for sample, result in zip(samples, results, strict=True):
        assert "sample_capture" in result or result["matches"][0]["loss_ones"] is not None, sample
        got = result.get("sample_capture")
        if got is not None:
            capture = "infer/" + Path(got["path"]).name
            assert capture in findable and _stem(findable[capture]) == _stem(str(sample)), (sample, got)
            found[str(sample.relative_to(demo))] = capture
    for capture, sample in findable.items():  # each one is found from its README sample and its .pt twin
        assert found.get(sample) == capture, (capture, sample, found.get(sample))
        assert found.get(sample.replace("train/", "train_pt/").replace(".ckpt", ".pt")) == capture or \
            not sample.startswith("train/"), capture


def test_p_on_every_capture_pairs_as_pair_capture_does(demo):
    """A capture (no loss mask, or one in a folder of captures) is paired as before: the same
    matches, its README sample first or tied for first."""
    async def run():
        source = LocalSource()
        out = []
        for capture, sample, _ in demo_pairs(demo):
            path, dataset = str(demo / capture), pair_dataset(str(demo), str(demo / capture))
            out.append((capture, sample, await pair_either(source, path, dataset),
                        await pair_capture(source, path, dataset, skip_folder=True)))
        return out

    for capture, sample, either, alone in asyncio.run(run()):
        assert "sample_capture" not in either, capture
        assert either["matches"] == alone["matches"], capture
        first = alone["matches"][0]
        tied = [m["path"] for m in alone["matches"] if (m["score"], m["shared_tokens"]) ==
                (first["score"], first["shared_tokens"])]
        assert sample in tied, (capture, alone["matches"][:2])  # fault_layer_ids_s20: train/ and train_ids_0_2_3/
